"""Python's arithmetic on a script's plain values: what TVM's parser computes in Python before
any IR exists (`1 << 20`, `2 ** 10`, `max(M, N)`, `len(shape)`), for the lowering of a
kernel and for a file's top-level constants alike.

The values are literals of the text or results of these operations, never a user's objects,
so nothing of the user's runs.  Python's own operators compute them (`operator`, the
builtins), with bounds that keep a language server alive on hostile text: an integer of more
than `MAX_BITS` bits, a sequence of more than `MAX_ITEMS` items, and the work of making them
(`10 ** 10 ** 9`, `"a" * 10 ** 9`) are refused before they are computed."""
from __future__ import annotations

import ast
import math
import operator

MAX_BITS = 4096          # no shape, stride or literal of a kernel comes near
MAX_ITEMS = 1 << 16

BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "<<": operator.lshift,
    ">>": operator.rshift, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "@": operator.matmul,
}
UNARY = {"-": operator.neg, "+": operator.pos, "~": operator.invert}
# the builtins a script may apply to plain values, and the T. operation for a TIR value
BUILTINS = {"abs": abs, "bool": bool, "float": float, "int": int, "len": len, "max": max,
            "min": min, "pow": pow, "round": round, "sum": sum}
TIR_SPELLING = {"abs": "T.abs", "max": "T.max", "min": "T.min", "pow": "T.pow",
                "round": "T.round", "int": "T.Cast(\"int32\", x)",
                "float": "T.Cast(\"float32\", x)"}


class ConstError(Exception):
    """An operation Python refuses on these values, or one past the bounds; the message says
    which, in words for a diagnostic."""


def binary(op: str, a, b):
    f = BINARY.get(op)
    if f is None:
        raise ConstError(f"operator '{op}' is not supported")
    _guard_binary(op, a, b)
    return _bounded(_apply(op, f, a, b))


def unary(op: str, a):
    f = UNARY.get(op)
    if f is None:
        raise ConstError(f"operator '{op}' is not supported")
    return _bounded(_apply(op, f, a))


def call(name: str, args, kwargs=None):
    """A builtin of `BUILTINS` applied to plain values."""
    f = BUILTINS[name]
    if name == "pow" and len(args) == 2:
        _guard_binary("**", *args)
    return _bounded(_apply(f"{name}()", f, *args, **(kwargs or {})))


def _apply(what, f, *args, **kwargs):
    try:
        return f(*args, **kwargs)
    except ZeroDivisionError as e:
        raise ConstError(str(e)) from None
    except OverflowError:
        raise ConstError(f"{_what(what)} overflows") from None
    except (TypeError, ValueError, ArithmeticError, RecursionError, MemoryError):
        raise ConstError(f"{_what(what)} does not apply to these operands") from None


def _what(what: str) -> str:
    return what if what.endswith("()") else f"operator '{what}'"


def _int(x) -> bool:
    return isinstance(x, int)


def _guard_binary(op, a, b):
    big = ConstError(f"operator '{op}' makes a value too large for a kernel "
                     f"(more than {MAX_BITS} bits)")
    if op == "**" and _int(a) and _int(b) and b > 0 and abs(a) > 1 and \
            b * math.log2(abs(a)) > MAX_BITS:
        raise big
    if op == "<<" and _int(a) and _int(b) and a != 0 and b > MAX_BITS:
        raise big
    if op == "*":
        for seq, k in ((a, b), (b, a)):
            if isinstance(seq, (str, bytes, tuple, list)) and _int(k) and \
                    len(seq) * k > MAX_ITEMS:
                raise ConstError(f"operator '*' makes a sequence of more than {MAX_ITEMS} "
                                 "items")


def _bounded(v):
    if _int(v) and v.bit_length() > MAX_BITS:
        raise ConstError(f"the value is too large for a kernel (more than {MAX_BITS} bits)")
    if isinstance(v, (str, bytes, tuple, list)) and len(v) > MAX_ITEMS:
        raise ConstError(f"the value has more than {MAX_ITEMS} items")
    return v


def parse(text: str):
    """The `ast` node of one Python expression (`SyntaxError` when it is not one)."""
    return ast.parse(text, mode="eval").body


def assignment(line: str, known: dict) -> list:
    """[(name, value)] that one assignment statement binds (`N = 8`, `M = N = 8`,
    `M, N = 8, 16`, `K: int = 8`), its value computed by `evaluate` over `known`; a
    `ConstError` for any other statement or value (`SyntaxError` for what does not parse)."""
    (stmt,) = ast.parse(line).body or (None,)
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    elif isinstance(stmt, ast.Assign):
        targets = stmt.targets
    else:
        raise ConstError("not an assignment")
    value = evaluate(stmt.value, known)
    out = []
    for t in targets:
        if isinstance(t, ast.Name):
            out.append((t.id, value))
        elif isinstance(t, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in t.elts) \
                and isinstance(value, tuple) and len(value) == len(t.elts):
            out.extend((e.id, v) for e, v in zip(t.elts, value))
        else:
            raise ConstError("not an assignment to names")
    return out


def evaluate(node, known: dict):
    """The value of a constant expression, a node of Python's `ast`, over the values `known`
    by name: literals, tuples, names, operators, the builtins and constant indexing; a
    `ConstError` for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(evaluate(e, known) for e in node.elts)
    if isinstance(node, ast.Name) and node.id in known:
        return known[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _AST_BINARY:
        return binary(_AST_BINARY[type(node.op)], evaluate(node.left, known),
                              evaluate(node.right, known))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _AST_UNARY:
        return unary(_AST_UNARY[type(node.op)], evaluate(node.operand, known))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in BUILTINS and node.func.id not in known and \
            not any(isinstance(a, ast.Starred) for a in node.args) and \
            all(k.arg is not None for k in node.keywords):
        return call(node.func.id, [evaluate(a, known) for a in node.args],
                            {k.arg: evaluate(k.value, known) for k in node.keywords})
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
        seq, index = evaluate(node.value, known), evaluate(node.slice, known)
        if isinstance(seq, tuple) and isinstance(index, int) and -len(seq) <= index < len(seq):
            return seq[index]
    raise ConstError("not a constant expression")


_AST_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
               ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>",
               ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
_AST_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
