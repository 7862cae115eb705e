"""No module of the core or the server is longer than 450 lines: a module that grows past it
is split by concern (as codegen/llvm/calls.py was from exprs.py)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 450


def test_no_module_over_the_limit():
    files = sorted(p for d in ("language", "server") for p in (ROOT / d).rglob("*.py"))
    assert len(files) > 100
    long = {str(p.relative_to(ROOT)): n for p in files
            if (n := p.read_text(encoding="utf-8").count("\n")) > LIMIT}
    assert long == {}
