#pragma once
/// Stencils on a grid decomposed over MPI ranks (docs/DISTRIBUTED.md):
///
///   sparstencil::Domain<2> domain(MPI_COMM_WORLD, {8192, 8192}, Boundary::fixed_rim);
///   sparstencil::DistributedField<float, 2> a(domain, ghost), b(domain, ghost);
///   sparstencil::DistributedPlan plan(space, stencil, a, b, options);
///   plan.iterate(a, b, 1000);   // halos t r wide exchanged every t fused steps
///   auto image = sparstencil::gather(a);   // the global grid on rank 0
///
/// Each rank runs the library's own plans on boxes of its padded block: the interior,
/// which needs no halo, while the halo is in flight; then the band along each face that
/// has a neighbour. Results are those of the single-domain run, bit for bit where the
/// executor's sums do not depend on a point's place in its tile (the generic executor).
/// Errors found on any rank are thrown on every rank, naming the ranks.
///
/// The parts, one concept a header: SparStencil_MpiCalls.hpp (checked calls, errors agreed
/// by every rank), SparStencil_GpuTransport.hpp (device pointers, staging, IPC),
/// SparStencil_Placement.hpp (ranks on hosts and GPUs), SparStencil_LaunchTimer.hpp,
/// SparStencil_HaloBoxes.hpp (boxes and their packing), SparStencil_Decomposition.hpp
/// (Domain), SparStencil_DistributedField.hpp (DistributedField, gather, scatter),
/// SparStencil_HaloExchange.hpp (a rank's messages, buffers and peer copies),
/// SparStencil_BoxPlans.hpp (the interior, bands and computed box and their plans) and
/// SparStencil_DistributedPlan.hpp (DistributedPlan).
#include "SparStencil_Decomposition.hpp"
#include "SparStencil_DistributedField.hpp"
#include "SparStencil_DistributedPlan.hpp"
