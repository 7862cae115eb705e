"""Validation of a candidate before it is measured: every verification rule on the
scheduled module (the same rules `tirkit check` runs).

    errors = validate(sch.mod)      # [Diagnostic] of severity "error"; empty: valid
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class _Checked:
    """What `run_rules` reads of a parse result, for a module built by a schedule."""
    module: object
    diagnostics: list = dataclasses.field(default_factory=list)
    text: str = ""
    path: str | None = None


def validate(module, target=None) -> list:
    from ..verify import run_rules
    return [d for d in run_rules(_Checked(module), target=target) if d.severity == "error"]


__all__ = ["validate"]
