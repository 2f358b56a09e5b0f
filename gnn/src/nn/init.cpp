// Seeded parameter initialisation (host draw, then one copy to the device).
#include "edgewise/gnn/nn/init.hpp"

#include <cmath>
#include <vector>

#include "edgewise/kernels/common/philox.hpp"

namespace edgewise::gnn::init {

Tensor uniform(int64_t rows, int64_t cols, float lo, float hi, Generator& generator, Device device) {
  const uint64_t stream = generator.next_stream();
  std::vector<float> host(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < host.size(); ++i) {
    const PhiloxBlock block = philox_block(generator.seed(), stream, i);
    host[i] = lo + (hi - lo) * static_cast<float>(uniform_double(block.v[0], block.v[1]));
  }
  return Tensor::from_host(host, rows, cols, device);
}

Tensor glorot_uniform(int64_t fan_in, int64_t fan_out, Generator& generator, Device device) {
  const float a = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  return uniform(fan_in, fan_out, -a, a, generator, device);
}

Tensor linear_default(int64_t fan_in, int64_t rows, int64_t cols, Generator& generator, Device device) {
  const float bound = fan_in > 0 ? 1.0f / std::sqrt(static_cast<float>(fan_in)) : 0.0f;
  return uniform(rows, cols, -bound, bound, generator, device);
}

}  // namespace edgewise::gnn::init
