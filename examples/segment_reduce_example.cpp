// Per-node mean of incoming edge messages with segment_reduce (edges sorted by
// destination, so the CSR offsets delimit each node's messages).
#include <cstdio>
#include <cstring>
#include <vector>

#include "edgewise/kernels/segment_reduce.hpp"

int main(int argc, char** argv) {
  // No flags: --help describes the program; anything else is an error (status 2).
  if (argc > 1) {
    const bool help = std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0;
    std::fprintf(help ? stdout : stderr, "%ssegment_reduce_example: per-node mean and max of incoming edge messages "
                 "with segment_reduce; takes no arguments\n", help ? "" : "error: ");
    return help && argc == 2 ? 0 : 2;
  }
  using namespace edgewise;
  // 5 edge messages of 2 features; node 0 receives edges 0-1, node 1 none, node 2 edges 2-4.
  std::vector<float> messages = {1, 10, 3, 30, 5, 50, 7, 70, 9, 90};
  std::vector<int64_t> offsets = {0, 2, 2, 5};
  std::vector<float> mean(3 * 2);
  std::vector<float> max(3 * 2);
  std::vector<int64_t> argmax(3 * 2);
  MatrixView<const float> values(messages.data(), 5, 2);
  VectorView<const int64_t> segments(offsets.data(), 4);
  segment_reduce<float>(values, segments, ReduceOp::Mean, MatrixView<float>(mean.data(), 3, 2));
  segment_reduce<float>(values, segments, ReduceOp::Max, MatrixView<float>(max.data(), 3, 2),
                        MatrixView<int64_t>(argmax.data(), 3, 2));
  for (int node = 0; node < 3; ++node) {
    std::printf("node %d: mean (%g, %g)  max (%g, %g) from edges (%lld, %lld)\n", node, mean[node * 2],
                mean[node * 2 + 1], max[node * 2], max[node * 2 + 1], static_cast<long long>(argmax[node * 2]),
                static_cast<long long>(argmax[node * 2 + 1]));
  }
  return 0;
}
