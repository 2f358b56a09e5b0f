// Layering fixture (never compiled): a private header named like a public one.
#pragma once

#include "edgewise/kernels/common/launch.cuh"
