// The CUDA driver of keyed dropout (keyed_dropout_cuda.cu; CUDA builds only).
#pragma once

#include <cstdint>

namespace edgewise::gnn::dist {

// y[r, c] = DropoutMask(p, seed, stream).apply(x[r, c], key_base[r] + c) for x, y
// [rows, cols] and key_base [rows], all device pointers.
void keyed_dropout_cuda(const float* x, float* y, const int64_t* key_base, int64_t rows, int64_t cols, float p,
                        uint64_t seed, uint64_t stream);

}  // namespace edgewise::gnn::dist
