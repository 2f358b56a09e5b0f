// Layering fixture (never compiled): dist reaching into the engine's src/.
#include "train/checkpoint.hpp"
