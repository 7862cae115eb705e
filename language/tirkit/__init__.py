"""tirkit: a compiler core for TensorIR kernels written in TVMScript.

    result = tirkit.parse(text, path=None)      # ParseResult(module, diagnostics)
    text2 = tirkit.to_script(result.module)     # canonical text, the source's spelling kept
    tirkit.structural_equal(a, b)               # spans ignored, variables up to renaming
    tirkit.check(text, path=None, target=None)  # every rule run
"""
from __future__ import annotations

from .diagnostics import Diagnostic, Span, TirkitError
from .ir.equality import structural_equal
from .script.parse import ParseResult, parse
from .script.printer import to_script
from .schedule import Schedule, ScheduleError
from .tensorize import rule as _tensorize_rule  # noqa: F401  (registers tensorize/available)

__version__ = "0.1.0"


def check(text, path=None, target=None, rules=None, intrinsics=(), functions=None):
    """Parse and run every verification rule; diagnostics sorted by position (`intrinsics`:
    folders of more tensor intrinsic files; `functions`: names whose kernels alone the rules
    check, every kernel when None)."""
    from .script.parse import CollectionPaused
    from .verify import run_rules
    with CollectionPaused():
        result = parse(text, path)
        return run_rules(result, target=target, rules=rules, intrinsics=intrinsics,
                         functions=functions)


def clear_caches():
    """Forget every cached parse, lowering and rule result (benchmarks measure cold runs)."""
    from .script import parse as _p
    from . import verify as _v
    _p.clear_caches()
    _v.clear_result_cache()


__all__ = ["parse", "to_script", "structural_equal", "check", "clear_caches", "Diagnostic",
           "Span", "ParseResult", "TirkitError", "Schedule", "ScheduleError"]
