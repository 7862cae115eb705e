"""Signature help inside a call of an `@I.ir_module`'s function (`Module.f(a, `): f's
signature, its parameters, and the one the cursor is in.  Read from the text, since the
class does not parse while a call is open."""
from __future__ import annotations

import re

from lsprotocol import types as T

from ..render import module_signatures, signature_parameters

_CALLEE = re.compile(r"([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*$")


def _open_call(text: str):
    """(the text before the innermost `(` left open at the end of `text`, the number of
    commas after it outside brackets), or None."""
    depth, commas = 0, 0
    for k in range(len(text) - 1, -1, -1):
        ch = text[k]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                return (text[:k], commas) if ch == "(" else None
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
    return None


def signature_help(server, a, pos):
    conv = server.converter(a)
    line, col = conv.line_col(pos)
    kernel = a.kernel_at(line)
    if kernel is None or kernel.module_name is None:
        return None
    first = max(kernel.chunk.start_line, line - 20)       # a call's arguments over lines
    text = "\n".join(a.lines[first - 1:line - 1] + [a.lines[line - 1][:col - 1]])
    found = _open_call(text)
    m = _CALLEE.search(found[0]) if found is not None else None
    if m is None or m.group(1) != kernel.module_name:
        return None
    sig = dict(module_signatures(kernel)).get(m.group(2))
    if sig is None:
        return None
    params = signature_parameters(sig)
    active = min(found[1], max(len(params) - 1, 0))
    return T.SignatureHelp(
        signatures=[T.SignatureInformation(
            label=f"{m.group(2)}{sig}",
            parameters=[T.ParameterInformation(label=p) for p in params],
            active_parameter=active)],
        active_signature=0, active_parameter=active)


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_SIGNATURE_HELP,
                         T.SignatureHelpOptions(trigger_characters=["(", ","]))
    async def help_(params: T.SignatureHelpParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return None
        return await server.run_sync(signature_help, server, a, params.position)
