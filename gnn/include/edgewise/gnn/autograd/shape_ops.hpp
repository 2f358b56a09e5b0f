// Differentiable changes of shape: a slice of rows, zero rows appended, rows of
// several Variables stacked (each a byte copy on the Variables' device: rows are
// contiguous), a reshape (no copy), and blocks placed on a block diagonal.
#pragma once

#include <cstdint>
#include <vector>

#include "edgewise/gnn/autograd/autograd.hpp"

namespace edgewise::gnn {

// Rows [begin, begin + count) of x (a copy). Backward: the gradient in those rows,
// zeros elsewhere. Throws std::invalid_argument unless 0 <= begin <= begin + count <= N.
Variable slice_rows(const Variable& x, int64_t begin, int64_t count);

// x followed by zero rows up to `rows` rows (x itself when it has that many).
// Backward: the first N rows of the gradient. Throws unless rows >= N.
Variable pad_rows(const Variable& x, int64_t rows);

// [parts[0]; parts[1]; ...] (equal column counts, one device, at least one part).
// Backward: each part its own rows of the gradient.
Variable concat_rows(const std::vector<Variable>& parts);

// The same elements as [rows, cols] (row-major order kept; storage shared).
// Throws std::invalid_argument unless rows * cols equals x's element count.
Variable reshape(const Variable& x, int64_t rows, int64_t cols);

// blocks [B * I, O] (block b = rows b*I .. b*I+I-1) -> [B * I, B * O] with block b at
// rows b*I.., columns b*O.., zeros elsewhere; backward reads the blocks back. Built on
// the host and copied to the device: meant for weights (R-GCN's block-diagonal
// decomposition), not for activations. Throws unless B >= 1 divides the row count.
Variable block_diagonal(const Variable& blocks, int64_t num_blocks);

}  // namespace edgewise::gnn
