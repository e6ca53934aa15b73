#pragma once
/// The generic executor's kernels (docs/GENERIC.md), one family a header; this one includes
/// them all, for the executor and the temporal kernels built on them:
///  - SparStencil_KernelCommon.hpp: the launch geometry, accumulation and launch policies
///    they share.
///  - SparStencil_InteriorKernel.hpp: InteriorKernel, one step over the interior,
///    hardware- or software-cached, in vectorised rows on host spaces.
///  - SparStencil_StreamKernel.hpp: StreamKernel, one step streamed plane by plane on GPU
///    teams.
///  - SparStencil_FusedKernel.hpp: FusedKernel, several steps a launch by overlapped tiles.
///  - SparStencil_RimKernel.hpp: RimKernel, the rim under the boundary mode, point by point;
///    SparStencil_HostRimKernel.hpp: HostRimKernel, the same on host spaces, row by row.
/// The deep temporal kernels have headers of their own (SparStencil_StreamTemporalKernel.hpp,
/// SparStencil_ExchangeTemporalKernel.hpp and its launch, SparStencil_ExchangeLaunch.hpp).
#include "SparStencil_FusedKernel.hpp"
#include "SparStencil_HostRimKernel.hpp"
#include "SparStencil_InteriorKernel.hpp"
#include "SparStencil_KernelCommon.hpp"
#include "SparStencil_RimKernel.hpp"
#include "SparStencil_StreamKernel.hpp"
