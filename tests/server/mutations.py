"""Deterministic mutations of kernel text: the edits a user makes halfway through typing
(and worse), for replaying through the server."""
from __future__ import annotations

import random

from lsprotocol import types as T

_SNIPPETS = ["(", ")", "[", "]", ":", ",", "T.", "for ", "with ", "T.block(", "\n", "    ",
             "\t", "#", '"', "'''", "\\", "\U0001F600", "é", "0", "-1", "99999999999999999999",
             "T.axis.remap(", "lambda", "@T.prim_func\n", "def ", "class X:\n", " = ", "**",
             "T.grid(", "T.reads(", "None", "if ", "else:", "\r\n", "\x00"]


def mutate(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    kind = rng.randrange(9)
    if kind == 0 and len(text) > 1:                    # delete a span
        i = rng.randrange(len(text))
        return text[:i] + text[i + rng.randrange(1, 40):]
    if kind == 1:                                      # insert a snippet
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(_SNIPPETS) + text[i:]
    if kind == 2 and len(lines) > 2:                   # swap two lines
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
        return "\n".join(lines)
    if kind == 3:                                      # duplicate a line
        a = rng.randrange(len(lines))
        lines.insert(a, lines[a])
        return "\n".join(lines)
    if kind == 4:                                      # truncate
        return text[:rng.randrange(len(text) + 1)]
    if kind == 5:                                      # dedent or indent a line
        a = rng.randrange(len(lines))
        lines[a] = lines[a][4:] if rng.random() < 0.5 else "    " + lines[a]
        return "\n".join(lines)
    if kind == 6:                                      # change a number
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        if digits:
            i = rng.choice(digits)
            return text[:i] + rng.choice(["0", "-3", "1000000", "n", "2.5"]) + text[i + 1:]
    if kind == 7:                                      # rename a name occurrence
        for name in ("vi", "A", "i", "k", "B", "C"):
            if name in text and rng.random() < 0.5:
                return text.replace(name, rng.choice(["zz", "T", "for", "A"]), 1)
    return text + rng.choice(_SNIPPETS)                # append


def edit_between(old: str, new: str) -> T.TextDocumentContentChangePartial:
    """One incremental change (UTF-16 positions) turning old into new."""
    p = 0
    n = min(len(old), len(new))
    while p < n and old[p] == new[p]:
        p += 1
    s = 0
    while s < n - p and old[len(old) - 1 - s] == new[len(new) - 1 - s]:
        s += 1

    def pos(text, off):
        head = text[:off]
        line = head.count("\n")
        col_text = head[head.rfind("\n") + 1:]
        return T.Position(line, len(col_text.encode("utf-16-le", "surrogatepass")) // 2)
    return T.TextDocumentContentChangePartial(
        range=T.Range(pos(old, p), pos(old, len(old) - s)), text=new[p:len(new) - s])


def corpus(texts, count: int, seed: int = 1234):
    """`count` successive document states, each a few mutations from one of `texts`."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        t = rng.choice(texts)
        for _ in range(rng.randrange(1, 4)):
            t = mutate(t, rng)
        out.append(t)
    return out


def core_corpus(count: int):
    """Texts from the compiler core's fuzz corpus (tests/test_fuzz.py `mutants`), decoded as
    editors do: with replacement characters (VS Code), or keeping the bytes that are not UTF-8
    (Neovim), which then reach the server as lone surrogates; None when this checkout has no
    such corpus."""
    import pathlib
    import sys
    tests = str(pathlib.Path(__file__).resolve().parents[1])
    if tests not in sys.path:
        sys.path.append(tests)
    try:
        import test_fuzz
        gen = test_fuzz.mutants(count)
        return [data.decode("utf-8", "surrogateescape" if i % 2 else "replace")
                for i, (_, data) in enumerate(gen)]
    except Exception:
        return None
