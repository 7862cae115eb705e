"""Never a traceback: mutated kernels (truncated, lines deleted, tokens swapped and
duplicated, random and non-UTF-8 bytes) all end in diagnostics, in-process and via the CLI."""
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import tirkit
from conftest import EXAMPLES
from tirkit.diagnostics import Diagnostic

ROOT = Path(__file__).resolve().parent.parent
SEEDS = sorted((EXAMPLES / "valid").glob("*.py")) + sorted((EXAMPLES / "invalid").glob("*.py"))
TOKEN = re.compile(r"\w+|[^\w\s]")
N_MUTANTS = 2000


def _tokens(text):
    return [m.span() for m in TOKEN.finditer(text)]


def truncate(rng, data: bytes) -> bytes:
    return data[:rng.randrange(len(data))]


def delete_lines(rng, data: bytes) -> bytes:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    return b"\n".join(lines[:i] + lines[i + rng.randint(1, 3):])


def swap_tokens(rng, data: bytes) -> bytes:
    text = data.decode("utf-8", "surrogateescape")
    toks = _tokens(text)
    if len(toks) < 2:
        return data
    (a0, a1), (b0, b1) = sorted(rng.sample(toks, 2))
    return (text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:]).encode(
        "utf-8", "surrogateescape")


def _one_token(rng, data: bytes):
    """(text, (start, end) of one of its tokens picked by rng), or None without tokens."""
    text = data.decode("utf-8", "surrogateescape")
    toks = _tokens(text)
    return (text, rng.choice(toks)) if toks else None


def duplicate_token(rng, data: bytes) -> bytes:
    if not (pick := _one_token(rng, data)):
        return data
    text, (a0, a1) = pick
    return (text[:a1] + rng.choice(["", " "]) + text[a0:a1] + text[a1:]).encode(
        "utf-8", "surrogateescape")


def delete_token(rng, data: bytes) -> bytes:
    if not (pick := _one_token(rng, data)):
        return data
    text, (a0, a1) = pick
    return (text[:a0] + text[a1:]).encode("utf-8", "surrogateescape")


def random_bytes(rng, data: bytes) -> bytes:
    i = rng.randrange(len(data))
    junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return data[:i] + junk + data[i:]


def non_utf8(rng, data: bytes) -> bytes:
    i = rng.randrange(len(data))
    return data[:i] + rng.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\x80\x80", b"\xfe\xff"]) + \
        data[i:]


def reindent(rng, data: bytes) -> bytes:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    lines[i] = rng.choice([b" ", b"\t", b"   ", b""]) + lines[i].lstrip(b" ") \
        if rng.random() < 0.7 else lines[i] + rng.choice([b":", b"(", b"[", b"\\", b'"'])
    return b"\n".join(lines)


MUTATORS = [truncate, delete_lines, swap_tokens, duplicate_token, delete_token, random_bytes,
            non_utf8, reindent]


def mutants(n, seed=20240):
    rng = random.Random(seed)
    sources = [p.read_bytes() for p in SEEDS]
    for k in range(n):
        data = rng.choice(sources)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            data = rng.choice(MUTATORS)(rng, data) if data.strip() else data
        yield k, data


def _valid_span(d, n_lines):
    s = d.span
    return (s is not None and 1 <= s.line <= s.end_line <= n_lines + 1 and s.column >= 1
            and (s.end_line > s.line or s.end_column >= s.column))


def test_mutated_kernels_end_in_diagnostics_in_process():
    failures = []
    kinds = set()
    with_errors = 0
    for k, data in mutants(N_MUTANTS):
        try:
            diags = tirkit.check(data, path=f"mutant{k}.py")
        except Exception as e:  # noqa: BLE001 - the point of the test
            failures.append((k, f"{type(e).__name__}: {e}", data[:300]))
            continue
        n_lines = data.count(b"\n") + 1
        bad = [d for d in diags if not isinstance(d, Diagnostic) or d.code == "internal"
               or not _valid_span(d, n_lines)]
        if bad:
            failures.append((k, bad[0], data[:300]))
        kinds.update(d.code.split("/")[0] for d in diags)
        with_errors += any(d.severity == "error" for d in diags)
    assert failures == []
    # the mutants really do break things, in many ways
    assert with_errors > N_MUTANTS // 2
    assert {"syntax", "name", "type"} <= kinds


def test_mutated_kernels_through_the_cli(tmp_path):
    paths = []
    for k, data in mutants(20, seed=7):
        p = tmp_path / f"mutant{k}.py"
        p.write_bytes(data)
        paths.append(str(p))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "language"), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "check", *paths],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode in (0, 1)
    assert "Traceback" not in r.stdout + r.stderr
    assert "20 files checked" in r.stderr
    assert re.search(r"mutant\d+\.py:\d+:\d+: error: .* \[syntax\]", r.stdout)
