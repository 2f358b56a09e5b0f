// The CUDA check macros are public API (edgewise/kernels/common/cuda_check.hpp):
// code built on the kernels, such as the engine's own CUDA code, uses them too.
#pragma once

#include "edgewise/kernels/common/cuda_check.hpp"
