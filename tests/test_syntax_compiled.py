"""The compiled LALR parser (lark-cython, the `fast` extra) and pure lark read every text alike:
the same CST, the same syntax errors with the same ranges, the same comments."""
import subprocess
import sys

from conftest import EXAMPLES, ROOT, server_env
from fuzz_mutators import mutants
from tirkit.syntax.chunks import find_chunks
from tirkit.syntax.parser import get_parser, parse_chunk

import lark_cython  # noqa: F401,E402  (the test extra installs it: no silent skip)


def _bench_module():
    """benchmarks/kernels.py's `module` (loaded by path: tests/ has a `kernels` of its own)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_kernels",
                                                  ROOT / "benchmarks" / "kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.module


def _chunk_texts(text: str) -> list:
    chunks, _ = find_chunks(text)
    return [p.text for c in chunks for p in (c.parts or [c])]


def _sources() -> list:
    files = sorted(EXAMPLES.glob("*/*.py"))
    assert len(files) >= 10, "the shared examples are missing"
    return [f.read_bytes() for f in files]


def _same(text: str) -> None:
    pure, fast = parse_chunk(text, compiled=False), parse_chunk(text, compiled=True)
    assert repr(fast.module) == repr(pure.module), text
    assert fast.errors == pure.errors, text
    assert fast.comments == pure.comments, text


def test_the_two_parsers_are_different_objects():
    fast, pure = get_parser(True), get_parser(False)
    assert fast is not pure
    assert "lark_cython" in type(fast.parser.parser.parser).__module__
    assert "lark_cython" not in type(pure.parser.parser.parser).__module__


def test_examples_parse_alike():
    texts = [t for src in _sources() for t in _chunk_texts(src.decode("utf-8", "replace"))]
    assert len(texts) >= 20
    for text in texts:
        _same(text)
    # and a module of 61 methods, as TVM prints one
    for text in _chunk_texts(_bench_module()()[0]):
        _same(text)


def test_broken_texts_report_the_same_errors():
    """Mutants of the examples (deleted tokens, bad indentation, bad bytes, truncation): the
    recovery re-parses after each error, so every error path is taken by both parsers."""
    n_errors = 0
    for _, data in mutants(_sources(), 150, seed=20):
        for text in _chunk_texts(data.decode("utf-8", "replace")):
            _same(text)
            n_errors += len(parse_chunk(text).errors)
    assert n_errors > 50


def test_pure_lark_when_asked_or_when_lark_cython_is_missing():
    """TIRKIT_PURE_LARK=1 (or no lark-cython) selects lark's own parser; the check of a file
    gives the same diagnostics either way."""
    path = str(EXAMPLES / "invalid")
    prog = ("import sys, glob, tirkit\n"
            "from tirkit.syntax.parser import get_parser\n"
            "print(type(get_parser().parser.parser.parser).__module__)\n"
            "for f in sorted(glob.glob(sys.argv[1] + '/*.py')):\n"
            "    for d in tirkit.check(open(f, 'rb').read(), f):\n"
            "        print(f, d.code, d.span.line, d.span.column, d.message)\n")
    outs = {}
    for pure in ("", "1"):
        env = dict(server_env(), TIRKIT_PURE_LARK=pure)
        r = subprocess.run([sys.executable, "-c", prog, path], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outs[pure] = r.stdout.splitlines()
    assert "lark_cython" in outs[""][0] and "lark_cython" not in outs["1"][0]
    assert len(outs[""]) > 10
    assert outs[""][1:] == outs["1"][1:]
    # without the package at all: the import fails, the pure parser answers
    blocked = ("import sys\nsys.modules['lark_cython'] = None\n" + prog)
    r = subprocess.run([sys.executable, "-c", blocked, path], env=server_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert "lark_cython" not in out[0] and out[1:] == outs[""][1:]
