"""Which ``MessagePassing.message`` methods are a gather, optionally scaled per edge.

A message is fusable into Edgewise's gather-reduce when its body is one of

    return x_j
    return w.view(-1, 1) * x_j            (or x_j * w.view(-1, 1), w.unsqueeze(1 / -1))
    return x_j if w is None else <one of the scaled forms>
    return w.unsqueeze(-1) * x_j           (GAT: w [E, H] scales x_j [E, H, C] per head)

with ``x_j`` and ``w`` its only parameters (any names; ``x_j`` ends in ``_j``). The
source is read and parsed once per function; anything else (another statement, a
call on x_j, a third parameter) is not fusable and keeps PyG's own message.
"""

import ast
import functools
import inspect
import textwrap
from typing import NamedTuple, Optional


class MessageForm(NamedTuple):
    feature: str  # the propagate() keyword that x_j is lifted from ("x" for x_j)
    weight: Optional[str]  # the per-edge scalar's keyword, None for a plain gather
    weight_optional: bool  # the message tolerates weight None (then a plain gather)
    per_head: bool  # the weight is w.unsqueeze(-1): [E, H] scales x_j [E, H, C] per head too


def _is_name(node, name):
    return isinstance(node, ast.Name) and node.id == name


def _constant_ints(args):
    values = []
    for a in args:
        if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub) and isinstance(a.operand, ast.Constant):
            values.append(-a.operand.value)
        elif isinstance(a, ast.Constant):
            values.append(a.value)
        else:
            return None
    return values


def _column(node, weight):
    """"edge" for w.view(-1, 1) / w.unsqueeze(1) (one scalar per edge), "last" for
    w.unsqueeze(-1) (any trailing shape, broadcast over the last), else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords):
        return None
    if not _is_name(node.func.value, weight):
        return None
    args = _constant_ints(node.args)
    if node.func.attr == "view" and args == [-1, 1]:
        return "edge"
    if node.func.attr == "unsqueeze" and args == [1]:
        return "edge"
    if node.func.attr == "unsqueeze" and args == [-1]:
        return "last"
    return None


def _scaled(node, feature, weight):
    """The column kind of ``weight-column * feature`` (either order), else None."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    if _is_name(node.left, feature):
        return _column(node.right, weight)
    if _is_name(node.right, feature):
        return _column(node.left, weight)
    return None


def _is_none_test(node, weight):
    return (isinstance(node, ast.Compare) and _is_name(node.left, weight) and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Is) and isinstance(node.comparators[0], ast.Constant)
            and node.comparators[0].value is None)


def _returned_expression(function_def):
    body = list(function_def.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # docstring
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    return body[0].value


@functools.lru_cache(maxsize=None)
def message_form(message) -> Optional[MessageForm]:
    """The MessageForm of a message function, or None when it is not one of the forms above."""
    try:
        source = textwrap.dedent(inspect.getsource(message))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    function_def = tree.body[0]
    arguments = function_def.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
        return None
    names = [a.arg for a in arguments.args]
    if not names or names[0] != "self" or len(names) not in (2, 3) or not names[1].endswith("_j"):
        return None
    feature_j = names[1]
    feature = feature_j[:-2]
    weight = names[2] if len(names) == 3 else None
    expression = _returned_expression(function_def)
    if expression is None:
        return None
    if weight is None:
        return MessageForm(feature, None, True, False) if _is_name(expression, feature_j) else None
    column = _scaled(expression, feature_j, weight)
    if column is not None:
        return MessageForm(feature, weight, False, column == "last")
    if (isinstance(expression, ast.IfExp) and _is_none_test(expression.test, weight)
            and _is_name(expression.body, feature_j)):
        column = _scaled(expression.orelse, feature_j, weight)
        if column is not None:
            return MessageForm(feature, weight, True, column == "last")
    return None
