"""The whole-tree result cache: per file, the diagnostics of its last check, valid while the
file's content hash, the configuration's fingerprint, the `.params` files it names and
tirkit's version are unchanged (as ruff's `.ruff_cache` and mypy's `.mypy_cache`).

It lives in `.tirkit_cache/` at the project root (the configuration's folder, or the current
one), or where `cache-dir`, `--cache-dir` or `TIRKIT_CACHE_DIR` say; `--no-cache` skips it
and `tirkit clean` (or deleting the folder) clears it.  One JSON file per tirkit version,
written through a temporary file and a rename.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import tempfile

from ..diagnostics import Diagnostic, Span

FORMAT = 1


@functools.lru_cache(maxsize=1)
def version() -> str:
    """tirkit's version and a stamp of its sources (so that a changed rule, in a
    development install, never answers from an old result)."""
    from .. import __version__
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256()
    for d, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            if n.endswith((".py", ".lark")):
                st = os.stat(os.path.join(d, n))
                h.update(f"{os.path.relpath(os.path.join(d, n), root)}:{st.st_mtime_ns}:"
                         f"{st.st_size}\n".encode())
    return f"{__version__}+{h.hexdigest()[:12]}"


def key(data: bytes, fingerprint: str, flags: str = "") -> str:
    h = hashlib.sha256(data)
    h.update(f"\0{fingerprint}\0{version()}\0{FORMAT}\0{flags}".encode())
    return h.hexdigest()


def dump(d: Diagnostic) -> list:
    s = d.span
    return [d.code, d.severity, d.message, list(s[:4]) + [s.file],
            [[list(r[:4]) + [r.file], m] for r, m in d.related if r is not None]]


def load_diag(x) -> Diagnostic:
    code, sev, msg, span, related = x
    return Diagnostic(code, sev, msg, Span(*span),
                      [(Span(*r), m) for r, m in related])


class ResultCache:
    """Entries by absolute path: {"key": ..., "diagnostics": [...]}."""

    def __init__(self, folder: str | None):
        self.folder = folder
        self.entries: dict = {}
        self.dirty = False
        if folder:
            try:
                with open(self.file, encoding="utf-8") as fh:
                    data = json.load(fh)
                if isinstance(data, dict) and data.get("format") == FORMAT:
                    self.entries = data.get("files", {})
            except (OSError, ValueError):
                self.entries = {}

    @property
    def file(self) -> str:
        from .. import __version__
        return os.path.join(self.folder, f"check-{__version__}.json")

    def get(self, path: str, k: str):
        e = self.entries.get(path)
        if e is None or e.get("key") != k:
            return None
        try:
            return [load_diag(x) for x in e["diagnostics"]]
        except (TypeError, ValueError, KeyError):
            return None

    def put(self, path: str, k: str, diagnostics) -> None:
        self.entries[path] = {"key": k, "diagnostics": [dump(d) for d in diagnostics]}
        self.dirty = True

    def save(self) -> None:
        if not self.folder or not self.dirty:
            return
        try:
            os.makedirs(self.folder, exist_ok=True)
            tag = os.path.join(self.folder, "CACHEDIR.TAG")
            if not os.path.exists(tag):
                with open(tag, "w", encoding="utf-8") as fh:
                    fh.write("Signature: 8a477f597d28d172789f06886806bc55\n"
                             "# tirkit's result cache; `tirkit clean` removes it.\n")
            ignore = os.path.join(self.folder, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as fh:
                    fh.write("*\n")
            # files that no longer exist are forgotten
            self.entries = {p: e for p, e in self.entries.items() if os.path.exists(p)}
            fd, tmp = tempfile.mkstemp(prefix=".check-", dir=self.folder)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"format": FORMAT, "files": self.entries}, fh,
                          separators=(",", ":"))
            os.replace(tmp, self.file)
        except OSError:
            pass                    # a cache that cannot be written only costs time


def clear(folder: str) -> bool:
    """Remove a cache folder; False when there was none.  Refuses a folder that is not a
    tirkit cache (no CACHEDIR.TAG)."""
    if not os.path.isdir(folder):
        return False
    if not os.path.isfile(os.path.join(folder, "CACHEDIR.TAG")):
        raise OSError(f"{folder} is not a tirkit cache (no CACHEDIR.TAG); left as it is")
    shutil.rmtree(folder)
    return True
