"""Line wrapping: a statement longer than the line limit whose right-hand side is one call
prints one argument a line."""
from __future__ import annotations

from .base import INDENT, LINE_LIMIT


def wrap_line(indent: str, text: str) -> list:
    """Split a too-long statement whose right-hand side is one call, one argument a line."""
    if len(indent) + len(text) <= LINE_LIMIT:
        return [indent + text]
    split = _split_call(text)
    if split is None:
        return [indent + text]
    head, args, tail = split
    inner = indent + INDENT
    return [indent + head + "("] + [inner + a + "," for a in args] + [indent + ")" + tail]


def _split_call(text):
    # the closing parenthesis of the last call, followed by '', ':' or ' -> X:'
    if text.endswith("):"):
        close = len(text) - 2
    elif text.endswith(")"):
        close = len(text) - 1
    elif ") -> " in text and text.endswith(":"):
        close = text.rfind(") -> ")
    else:
        return None
    depth = 0
    i = close
    in_str = None
    opens = None
    while i >= 0:
        ch = text[i]
        if in_str:
            if ch == in_str and (i == 0 or text[i - 1] != "\\"):
                in_str = None
        elif ch in "\"'":
            in_str = ch
        elif ch in ")]}":
            depth += 1
        elif ch in "([{":
            depth -= 1
            if depth == 0:
                opens = i
                break
        i -= 1
    if opens is None or opens == 0 or text[opens] != "(":
        return None
    head = text[:opens]
    if not (head[-1].isalnum() or head[-1] == "_"):
        return None
    # the call must be the whole right-hand side (or the whole statement / def header)
    start = _call_start(head)
    prefix = head[:start]
    if prefix not in ("", "def ", "return ") and not prefix.endswith(" = "):
        return None
    args = split_top_level(text[opens + 1:close])
    if len(args) < 2 and not head.startswith("def "):
        return None
    return head, args, text[close + 1:]


def _call_start(head: str) -> int:
    i = len(head)
    while i > 0 and (head[i - 1].isalnum() or head[i - 1] in "_."):
        i -= 1
    return i


def split_top_level(s: str) -> list:
    """The comma-separated items of `s` outside brackets and strings, stripped, up to the
    first closing bracket `s` does not open (`a, f(b, c)) -> x` gives `a`, `f(b, c)`)."""
    out, depth, cur, in_str = [], 0, [], None
    for i, ch in enumerate(s):
        if in_str:
            cur.append(ch)
            if ch == in_str and s[i - 1] != "\\":
                in_str = None
            continue
        if ch in "\"'":
            in_str = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    last = "".join(cur).strip()
    if last:
        out.append(last)
    return out
