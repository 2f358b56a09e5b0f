// Layering fixture (never compiled): tensor (first area) including nn (a later one).
#include "edgewise/gnn/nn/module.hpp"
