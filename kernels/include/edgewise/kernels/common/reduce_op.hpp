// ReduceOp: the reductions shared by segment_reduce, scatter_reduce and spmm.
#pragma once

#include <string_view>

namespace edgewise {

enum class ReduceOp : int { Sum = 0, Mean = 1, Min = 2, Max = 3 };

// "sum", "mean", "min", "max" (also "add", "amin", "amax"); throws std::invalid_argument.
ReduceOp parse_reduce_op(std::string_view name);
std::string_view to_string(ReduceOp op) noexcept;
constexpr bool has_arg(ReduceOp op) noexcept { return op == ReduceOp::Min || op == ReduceOp::Max; }

}  // namespace edgewise
