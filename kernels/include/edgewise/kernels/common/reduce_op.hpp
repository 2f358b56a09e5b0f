// ReduceOp: the reductions shared by segment_reduce, scatter_reduce and spmm, as
// ONE list. The enum, the names, runtime dispatch (visit_reduce_op), the Python
// names and the test parameterisation all expand EW_REDUCE_OPS, so nothing else
// enumerates the ops. What an op computes is its trait, Reducer<Op, T> in
// common/reducer.hpp; how to add one is written there.
#pragma once

#include <string_view>
#include <type_traits>

namespace edgewise {

// X(Name, "name", "alias"): the enumerator, the canonical name and one accepted
// alias (torch's spelling; repeat the name when there is none).
#define EW_REDUCE_OPS(X)   \
  X(Sum, "sum", "add")     \
  X(Mean, "mean", "mean")  \
  X(Min, "min", "amin")    \
  X(Max, "max", "amax")    \
  X(Mul, "mul", "prod")    \
  X(Var, "var", "var")     \
  X(Std, "std", "std")

#define EW_REDUCE_OP_ENUMERATOR(Name, name, alias) Name,
enum class ReduceOp : int { EW_REDUCE_OPS(EW_REDUCE_OP_ENUMERATOR) };
#undef EW_REDUCE_OP_ENUMERATOR

// Every op, in list order (tests parameterise over this).
#define EW_REDUCE_OP_VALUE(Name, name, alias) ReduceOp::Name,
inline constexpr ReduceOp kAllReduceOps[] = {EW_REDUCE_OPS(EW_REDUCE_OP_VALUE)};
#undef EW_REDUCE_OP_VALUE

// A name or alias from the list; throws std::invalid_argument listing the names.
ReduceOp parse_reduce_op(std::string_view name);
std::string_view to_string(ReduceOp op) noexcept;

template <ReduceOp Op>
using ReduceOpTag = std::integral_constant<ReduceOp, Op>;

// Calls f(ReduceOpTag<Op>{}) for the runtime `op`: the one switch over the ops.
// Every branch must return the same type.
template <class F>
constexpr decltype(auto) visit_reduce_op(ReduceOp op, F&& f) {
  switch (op) {
#define EW_REDUCE_OP_CASE(Name, name, alias) \
  case ReduceOp::Name: return f(ReduceOpTag<ReduceOp::Name>{});
    EW_REDUCE_OPS(EW_REDUCE_OP_CASE)
#undef EW_REDUCE_OP_CASE
  }
  return f(ReduceOpTag<ReduceOp::Sum>{});  // unreachable for a valid enumerator
}

// Whether the op defines an arg output (the row / edge of the winner): the
// trait's kHasArg, read without naming an element type.
bool has_arg(ReduceOp op) noexcept;

// How the backward of min/max shares an output's gradient among its tied elements
// (the elements equal to the output; NaN ties with NaN). Both are subgradients:
//   First  all of it to the forward's arg, the lowest tied row / edge: what
//          torch_scatter's scatter_max / segment_max_csr do (they return that arg).
//   Split  evenly among the k tied elements (1/k each). Read from the forward's
//          output, so it needs neither arg nor another forward pass.
//   SplitWithZeroBase
//          as Split, but an output equal to 0 is cut into k + 1 shares: torch's
//          scatter_reduce("amax" / "amin", include_self=False) backward counts the
//          value it reduces onto among the ties, and PyG's max / min aggregation
//          reduces onto zeros. This is the rule that gives PyG's numbers.
enum class TieRule : int { First = 0, Split = 1, SplitWithZeroBase = 2 };

// "first", "split" or "split_zero_base"; throws std::invalid_argument naming them.
TieRule parse_tie_rule(std::string_view name);
std::string_view to_string(TieRule rule) noexcept;

}  // namespace edgewise
