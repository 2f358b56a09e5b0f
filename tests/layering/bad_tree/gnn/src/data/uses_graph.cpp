// Layering fixture (never compiled): data including the engine.
#include "edgewise/gnn/graph/graph.hpp"
