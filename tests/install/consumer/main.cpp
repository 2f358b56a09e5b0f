// Uses the installed edgewise::kernels: a segment sum, checked by hand.
#include <cstdio>
#include <vector>

#include "edgewise/kernels/segment_reduce.hpp"

int main() {
  using namespace edgewise;
  std::vector<float> values = {1, 2, 3, 4, 5};
  std::vector<int64_t> offsets = {0, 2, 2, 5};
  std::vector<float> out(3, -1);
  segment_reduce<float>(MatrixView<const float>(values.data(), 5, 1), VectorView<const int64_t>(offsets.data(), 4),
                        ReduceOp::Sum, MatrixView<float>(out.data(), 3, 1));
  std::printf("consumer: segment sums %g %g %g (cuda built: %d)\n", out[0], out[1], out[2], cuda_built());
  return (out[0] == 3 && out[1] == 0 && out[2] == 12) ? 0 : 1;
}
