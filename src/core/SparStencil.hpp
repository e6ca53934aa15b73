#pragma once
/// SparStencil: everything a user needs, one include.
#include "SparStencil_Apply.hpp"
#include "SparStencil_Boundary.hpp"
#include "SparStencil_Catalogue.hpp"
#include "SparStencil_Fuse.hpp"
#include "SparStencil_Parse.hpp"
#include "SparStencil_Precision.hpp"
#include "SparStencil_Presets.hpp"
#include "SparStencil_KernelMatrix.hpp"
#include "SparStencil_Reference.hpp"
#include "SparStencil_Sparsity.hpp"
#include "SparStencil_Stencil.hpp"
#include "SparStencil_Views.hpp"
