// ReduceOp names and properties, expanded from the one list (EW_REDUCE_OPS).
#include "edgewise/kernels/common/reduce_op.hpp"

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/reducer.hpp"

namespace edgewise {

namespace {
#define EW_REDUCE_OP_NAME(Name, name, alias) " " name
constexpr const char* kNames = EW_REDUCE_OPS(EW_REDUCE_OP_NAME);
#undef EW_REDUCE_OP_NAME
}  // namespace

ReduceOp parse_reduce_op(std::string_view name) {
#define EW_REDUCE_OP_PARSE(Name, canonical, alias) \
  if (name == canonical || name == alias) return ReduceOp::Name;
  EW_REDUCE_OPS(EW_REDUCE_OP_PARSE)
#undef EW_REDUCE_OP_PARSE
  detail::throw_invalid_argument("op: unknown reduction '", name, "' (expected one of:", kNames, ")");
}

std::string_view to_string(ReduceOp op) noexcept {
  switch (op) {
#define EW_REDUCE_OP_STRING(Name, name, alias) \
  case ReduceOp::Name: return name;
    EW_REDUCE_OPS(EW_REDUCE_OP_STRING)
#undef EW_REDUCE_OP_STRING
  }
  return "?";
}

bool has_arg(ReduceOp op) noexcept {
  return visit_reduce_op(op, [](auto tag) { return Reducer<decltype(tag)::value, float>::kHasArg; });
}

TieRule parse_tie_rule(std::string_view name) {
  if (name == "first") return TieRule::First;
  if (name == "split") return TieRule::Split;
  if (name == "split_zero_base") return TieRule::SplitWithZeroBase;
  detail::throw_invalid_argument("tie_rule: unknown rule '", name, "' (expected first, split or split_zero_base)");
}

std::string_view to_string(TieRule rule) noexcept {
  switch (rule) {
    case TieRule::First: return "first";
    case TieRule::Split: return "split";
    case TieRule::SplitWithZeroBase: return "split_zero_base";
  }
  return "?";
}

}  // namespace edgewise
