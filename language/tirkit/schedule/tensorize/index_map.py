"""Index maps written as lambdas, read without running them:

    m = parse("lambda j, k: (j // 16, k // 4, j % 16, k % 4)")
    m.apply([vj, vk])          # -> IR index expressions
    m.text                     # the lambda as given (how the trace prints it)

Only integer constants, the lambda's parameters, `+ - * // %` and parentheses are allowed;
anything else raises ValueError with the offending part."""
from __future__ import annotations

import ast

from ...ir import expr as E


class IndexMap:
    def __init__(self, text, params, body):
        self.text = text
        self.params = params
        self.body = body

    def apply(self, indices):
        if len(indices) != len(self.params):
            raise ValueError(f"the map takes {len(self.params)} indices, not {len(indices)}")
        env = dict(zip(self.params, indices))
        return [_expr(b, env, indices[0].dtype if indices else "int32") for b in self.body]


_OPS = {ast.Add: E.Add, ast.Sub: E.Sub, ast.Mult: E.Mul, ast.FloorDiv: E.FloorDiv,
        ast.Mod: E.FloorMod}


def _expr(node, env, dt):
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Constant):
        return E.IntImm(dt, node.value)
    if isinstance(node, ast.BinOp):
        a, b = _expr(node.left, env, dt), _expr(node.right, env, dt)
        return _OPS[type(node.op)](a, b, a.dtype)
    raise AssertionError("checked by parse")


def parse(text: str) -> IndexMap:
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise ValueError(f"the index map is not a lambda: {e.msg}") from None
    if not isinstance(tree, ast.Lambda) or tree.args.vararg or tree.args.kwarg or \
            tree.args.kwonlyargs or tree.args.defaults:
        raise ValueError("the index map is `lambda i, j: (...)`")
    params = [a.arg for a in tree.args.args]
    body = tree.body.elts if isinstance(tree.body, (ast.Tuple, ast.List)) else [tree.body]

    def check(n):
        if isinstance(n, ast.Name) and n.id in params:
            return
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            check(n.left)
            check(n.right)
            return
        raise ValueError(f"`{ast.unparse(n)}` is not allowed in an index map (integers, the "
                         "lambda's parameters and + - * // %)")
    for b in body:
        check(b)
    return IndexMap(text.strip(), params, body)
