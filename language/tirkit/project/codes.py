"""Code patterns, as `select`, `ignore`, `per-file-ignores` and suppression comments write
them: an exact code (`bounds/out-of-bounds`), a family with its slash (`thread/`), a family
without it (`thread`), or `all`."""
from __future__ import annotations

import re

PATTERN = re.compile(r"^(?:all|[a-z][a-z0-9-]*(?:/[a-z0-9-]*)?)$")


def valid(pattern: str) -> bool:
    return isinstance(pattern, str) and bool(PATTERN.match(pattern))


def matches(code: str, pattern: str) -> bool:
    if pattern == "all" or pattern == code:
        return True
    if pattern.endswith("/"):
        return code.startswith(pattern)
    return "/" not in pattern and code.startswith(pattern + "/")


def specificity(pattern: str) -> int:
    """How narrowly a pattern names codes: all 0, a family 1, an exact code 2."""
    if pattern == "all":
        return 0
    return 2 if "/" in pattern and not pattern.endswith("/") else 1


def best(code: str, patterns) -> int | None:
    """The specificity of the narrowest pattern that names `code`, or None."""
    found = [specificity(p) for p in patterns if matches(code, p)]
    return max(found) if found else None
