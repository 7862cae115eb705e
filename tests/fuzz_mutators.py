"""Mutation kinds for fuzzing the checker (used by tests/test_fuzz.py and
benchmarks/fuzz_mutants.py).  Each mutator is `f(rng, data: bytes, other: bytes) -> bytes`:
`other` is a second seed program, for the kinds that combine two kernels."""
from __future__ import annotations

import re

TOKEN = re.compile(r"\w+|[^\w\s]")
NUMBER = re.compile(rb"(?<![\w.])\d+(\.\d+)?(?![\w.])")
_ENC = ("utf-8", "surrogateescape")


def _text(data: bytes) -> str:
    return data.decode(*_ENC)


def _bytes(text: str) -> bytes:
    return text.encode(*_ENC)


def _tokens(text):
    return [m.span() for m in TOKEN.finditer(text)]


def _one_token(rng, data: bytes):
    """(text, (start, end) of one of its tokens picked by rng), or None without tokens."""
    text = _text(data)
    toks = _tokens(text)
    return (text, rng.choice(toks)) if toks else None


# ---- the first kinds: truncation, deletions, swaps, noise ---------------------------------
def truncate(rng, data, other=b""):
    return data[:rng.randrange(len(data))] if data else data


def delete_lines(rng, data, other=b""):
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    return b"\n".join(lines[:i] + lines[i + rng.randint(1, 3):])


def swap_tokens(rng, data, other=b""):
    text = _text(data)
    toks = _tokens(text)
    if len(toks) < 2:
        return data
    (a0, a1), (b0, b1) = sorted(rng.sample(toks, 2))
    return _bytes(text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:])


def duplicate_token(rng, data, other=b""):
    if not (pick := _one_token(rng, data)):
        return data
    text, (a0, a1) = pick
    return _bytes(text[:a1] + rng.choice(["", " "]) + text[a0:a1] + text[a1:])


def delete_token(rng, data, other=b""):
    if not (pick := _one_token(rng, data)):
        return data
    text, (a0, a1) = pick
    return _bytes(text[:a0] + text[a1:])


def random_bytes(rng, data, other=b""):
    i = rng.randrange(len(data)) if data else 0
    junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return data[:i] + junk + data[i:]


def non_utf8(rng, data, other=b""):
    i = rng.randrange(len(data)) if data else 0
    return data[:i] + rng.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\x80\x80", b"\xfe\xff"]) + \
        data[i:]


def reindent(rng, data, other=b""):
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    lines[i] = rng.choice([b" ", b"\t", b"   ", b""]) + lines[i].lstrip(b" ") \
        if rng.random() < 0.7 else lines[i] + rng.choice([b":", b"(", b"[", b"\\", b'"'])
    return b"\n".join(lines)


# ---- the second kinds: splices, line swaps, crossovers, numbers, indentation --------------
def splice_tokens(rng, data, other=b""):
    """A run of 1-6 tokens, from this program or the other one, inserted or written over a
    run of tokens here (`vi, vj, T.vk = ...` comes from such a splice)."""
    text = _text(data)
    toks = _tokens(text)
    src = _text(other) if other and rng.random() < 0.5 else text
    stoks = _tokens(src)
    if not toks or not stoks:
        return data
    s = rng.randrange(len(stoks))
    e = min(len(stoks) - 1, s + rng.randint(0, 5))
    piece = src[stoks[s][0]:stoks[e][1]]
    d = rng.randrange(len(toks))
    a0 = toks[d][0]
    a1 = a0 if rng.random() < 0.5 else toks[min(len(toks) - 1, d + rng.randint(0, 3))][1]
    return _bytes(text[:a0] + piece + text[a1:])


def swap_lines(rng, data, other=b""):
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data
    i, j = rng.sample(range(len(lines)), 2)
    if rng.random() < 0.5:
        j = min(len(lines) - 1, i + 1)
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def crossover(rng, data, other=b""):
    """The first lines of one program, the last lines of another."""
    if not other:
        return data
    a, b = data.split(b"\n"), other.split(b"\n")
    return b"\n".join(a[:rng.randrange(len(a) + 1)] + b[rng.randrange(len(b) + 1):])


_NUMBERS = [b"0", b"1", b"-1", b"2", b"3", b"7", b"31", b"32", b"33", b"64", b"1000",
            b"4096", b"65536", b"2147483647", b"2147483648", b"99999999999999999999",
            b"0.5", b"1e9", b"-0", b"(-3)", b"T.int64(5)", b"n"]


def replace_number(rng, data, other=b""):
    nums = list(NUMBER.finditer(data))
    if not nums:
        return data
    for _ in range(rng.randint(1, 3)):
        m = rng.choice(nums)
        data = data[:m.start()] + rng.choice(_NUMBERS) + data[m.end():]
        nums = list(NUMBER.finditer(data))
        if not nums:
            break
    return data


def indent_noise(rng, data, other=b""):
    """A block of 1-4 lines shifted left or right, by spaces or a tab."""
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    for k in range(i, min(len(lines), i + rng.randint(1, 4))):
        shift = rng.choice([-8, -4, -2, -1, 1, 2, 4, 8, 0])
        if shift == 0:
            lines[k] = lines[k].replace(b"    ", b"\t", 1)
        elif shift > 0:
            lines[k] = b" " * shift + lines[k]
        else:
            cut = min(-shift, len(lines[k]) - len(lines[k].lstrip(b" ")))
            lines[k] = lines[k][cut:]
    return b"\n".join(lines)


FIRST_KINDS = [truncate, delete_lines, swap_tokens, duplicate_token, delete_token,
               random_bytes, non_utf8, reindent]
SECOND_KINDS = [splice_tokens, swap_lines, crossover, replace_number, indent_noise]
MUTATORS = FIRST_KINDS + SECOND_KINDS
TWO_PROGRAMS = (splice_tokens, crossover)      # the kinds that read a second program


def mutants(sources, n, seed, kinds=MUTATORS):
    """(k, bytes) for n mutants of the given seed programs, each 1-3 mutations deep (with
    FIRST_KINDS, the same sequence as before the second kinds existed)."""
    import random
    rng = random.Random(seed)
    for k in range(n):
        data = rng.choice(sources)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            if data.strip():
                m = rng.choice(kinds)
                other = rng.choice(sources) if m in TWO_PROGRAMS else b""
                data = m(rng, data, other)
        yield k, data
