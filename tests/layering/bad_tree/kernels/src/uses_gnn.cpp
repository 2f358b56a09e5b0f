// Layering fixture (never compiled): kernels code including the engine.
#include "edgewise/gnn/tensor/tensor.hpp"
