// Layering fixture (never compiled): a test reaching into kernels/src by a relative path.
#include "../../kernels/src/common/launch.cuh"
