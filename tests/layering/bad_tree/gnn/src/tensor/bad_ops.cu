// Layering fixture (never compiled): engine code reaching into kernels/src.
#include "common/launch.cuh"
#include "edgewise/kernels/segment_reduce.hpp"
