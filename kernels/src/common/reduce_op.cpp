// ReduceOp names.
#include "edgewise/kernels/common/reduce_op.hpp"

#include "edgewise/kernels/common/check.hpp"

namespace edgewise {

ReduceOp parse_reduce_op(std::string_view name) {
  if (name == "sum" || name == "add") return ReduceOp::Sum;
  if (name == "mean") return ReduceOp::Mean;
  if (name == "min" || name == "amin") return ReduceOp::Min;
  if (name == "max" || name == "amax") return ReduceOp::Max;
  detail::throw_invalid_argument("op: unknown reduction '", name, "' (expected sum, mean, min or max)");
}

std::string_view to_string(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
  }
  return "?";
}

}  // namespace edgewise
