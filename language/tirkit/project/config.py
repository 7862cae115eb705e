"""Configuration: `[tool.tirkit]` in `pyproject.toml`, or a `tirkit.toml` / `.tirkit.toml`
(the same keys at the top level), found by walking up from the checked file as ruff does:
in each folder `.tirkit.toml`, then `tirkit.toml`, then a `pyproject.toml` that has a
`[tool.tirkit]` table; the first found is the project's configuration and its folder the
project root.  Keys (docs/configuration.md):

    target = "cuda-sm80"                   # rules' target (a `# tirkit: target=` pragma loses)
    select = ["bounds/", "thread/"]        # code patterns to report (default: all)
    ignore = ["loop-nest/non-affine"]      # code patterns not to report
    per-file-ignores = { "tests/**" = ["bounds/"] }
    extend-exclude = ["generated/**"]      # skipped when walking a folder
    intrinsics = ["intrin/"]               # folders of tensor intrinsics, relative to the root
    warn-unused-ignores = true             # report `suppression/unused`
    cache-dir = ".tirkit_cache"            # whole-tree result cache, relative to the root
    [constants]                            # ([tool.tirkit.constants] in pyproject.toml)
    inline-threshold = 64                  # larger `T.allocate_const` go to a .params file

Precedence: explicit overrides (the command line, or the editor's settings) over the file
over the defaults.  `select` given as an override replaces the file's; `ignore` extends it.
The narrowest pattern that names a code decides (an exact code over a family over `all`;
`ignore` wins a tie), so `select = ["thread/launch-limit"]` with `ignore = ["thread/"]`
keeps `thread/launch-limit`.
"""
from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import os
import sys
from dataclasses import dataclass, replace

from . import codes

if sys.version_info >= (3, 11):
    import tomllib
else:                                       # pragma: no cover - Python 3.10
    import tomli as tomllib

FILE_NAMES = (".tirkit.toml", "tirkit.toml", "pyproject.toml")
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "node_modules",
                   "build", "dist", ".tirkit_cache", ".mypy_cache", ".ruff_cache", ".tox")
DEFAULT_CACHE_DIR = ".tirkit_cache"


class ConfigError(Exception):
    """A configuration file that cannot be read or holds a wrong key or value."""


@dataclass(frozen=True)
class Config:
    source: str | None = None               # the configuration file, None: defaults only
    root: str | None = None                 # its folder (patterns and folders relative to it)
    target: str | None = None
    select: tuple = ("all",)
    ignore: tuple = ()
    per_file_ignores: tuple = ()            # ((glob, (pattern, ...)), ...)
    extend_exclude: tuple = ()
    intrinsics: tuple = ()                  # absolute folders
    warn_unused_ignores: bool = False
    cache_dir: str | None = None            # absolute; None: DEFAULT_CACHE_DIR at the root
    inline_threshold: int = 64

    # ------------------------------------------------------------------ codes
    def file_ignores(self, path) -> tuple:
        """The code patterns `per-file-ignores` adds for `path`."""
        if not path or not self.per_file_ignores:
            return ()
        rel = self.relative(path)
        base = os.path.basename(rel)
        out = []
        for glob, pats in self.per_file_ignores:
            subject = rel if "/" in glob else base
            if fnmatch.fnmatchcase(subject, glob):
                out.extend(pats)
        return tuple(out)

    def enabled(self, code: str, path=None) -> bool:
        sel = codes.best(code, self.select)
        if sel is None:
            return False
        ign = codes.best(code, self.ignore + self.file_ignores(path))
        return ign is None or sel > ign

    # ------------------------------------------------------------------ files
    def relative(self, path) -> str:
        p = os.path.abspath(path)
        base = self.root or os.getcwd()
        try:
            rel = os.path.relpath(p, base)
        except ValueError:
            rel = p
        return rel.replace(os.sep, "/")

    def excluded(self, path) -> bool:
        """Whether a folder walk skips `path` (a file or a folder)."""
        name = os.path.basename(os.path.normpath(path))
        if name in DEFAULT_EXCLUDE:
            return True
        if not self.extend_exclude:
            return False
        rel = self.relative(path)
        for glob in self.extend_exclude:
            g = glob.rstrip("/")
            if "/" in g:
                if fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(rel, g + "/*"):
                    return True
            elif fnmatch.fnmatchcase(name, g):
                return True
        return False

    def cache_folder(self) -> str:
        return self.cache_dir or os.path.join(self.root or os.getcwd(), DEFAULT_CACHE_DIR)

    # ------------------------------------------------------------------ views
    def fingerprint(self) -> str:
        """A hash of everything that changes a file's check result (for result caches)."""
        d = self.to_dict()
        for k in ("source", "cache-dir", "extend-exclude", "constants"):
            d.pop(k, None)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        return {
            "source": self.source, "root": self.root, "target": self.target,
            "select": list(self.select), "ignore": list(self.ignore),
            "per-file-ignores": {g: list(p) for g, p in self.per_file_ignores},
            "extend-exclude": list(self.extend_exclude),
            "intrinsics": list(self.intrinsics),
            "warn-unused-ignores": self.warn_unused_ignores,
            "cache-dir": self.cache_folder(),
            "constants": {"inline-threshold": self.inline_threshold},
        }

    def with_overrides(self, **over) -> "Config":
        """`over` with None for "not given"; `select` replaces, `ignore` extends."""
        given = {k: v for k, v in over.items() if v is not None}
        if "select" in given:
            given["select"] = _patterns(given["select"], "select", "override")
        if "ignore" in given:
            given["ignore"] = self.ignore + _patterns(given["ignore"], "ignore", "override")
        if "cache_dir" in given:
            given["cache_dir"] = os.path.abspath(given["cache_dir"])
        return replace(self, **given)


# ---------------------------------------------------------------------- discovery
def find_config_file(start) -> str | None:
    """The first configuration file in `start` (a file's folder, or a folder) or above."""
    d = os.path.abspath(start)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
    while True:
        for name in FILE_NAMES:
            p = os.path.join(d, name)
            if os.path.isfile(p) and (name != "pyproject.toml" or _has_tool_table(p)):
                return p
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def load(path) -> Config:
    """The configuration in the file `path` (a pyproject.toml or a tirkit.toml)."""
    table = _table(*_stamp(path))
    return _build(table, os.path.abspath(path))


def resolve(path=None, config_file=None, isolated=False, **overrides) -> Config:
    """The configuration for the file or folder `path`: `config_file` when given, else the
    file found by walking up from `path` (or the current folder), else the defaults; then
    the explicit `overrides` (None entries are "not given")."""
    if isolated:
        base = Config()
    else:
        src = config_file or find_config_file(path or os.getcwd())
        base = load(src) if src else Config()
    return base.with_overrides(**overrides)


# ---------------------------------------------------------------------- reading
def _stamp(path):
    st = os.stat(path)
    return os.path.abspath(path), st.st_mtime_ns, st.st_size


def _has_tool_table(path) -> bool:
    try:
        return _table(*_stamp(path)) is not None
    except (OSError, ConfigError):
        return True           # a broken pyproject.toml is reported, not passed over


@functools.lru_cache(maxsize=64)
def _table(path, mtime_ns, size):
    """The tirkit table of a file (None: a pyproject.toml without one); cached by stamp."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(f"{path}: {e.strerror}") from None
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool")
        t = tool.get("tirkit") if isinstance(tool, dict) else None
        return t if isinstance(t, dict) else None
    return data


KEYS = ("target", "select", "ignore", "per-file-ignores", "extend-exclude", "intrinsics",
        "warn-unused-ignores", "cache-dir", "constants")


def _build(table, source) -> Config:
    table = table or {}
    where = f"{source}: " + ("[tool.tirkit]" if source.endswith("pyproject.toml") else "")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where} unknown key '{unknown[0]}' (known: {', '.join(KEYS)})")
    root = os.path.dirname(source)
    kw = {"source": source, "root": root}
    if "target" in table:
        kw["target"] = _target(table["target"], where)
    for key in ("select", "ignore"):
        if key in table:
            kw[key] = _patterns(table[key], key, where)
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{where} per-file-ignores must be a table of glob = [codes]")
        kw["per_file_ignores"] = tuple((str(g), _patterns(v, f"per-file-ignores.{g}", where))
                                       for g, v in pfi.items())
    if "extend-exclude" in table:
        kw["extend_exclude"] = _strings(table["extend-exclude"], "extend-exclude", where)
    if "intrinsics" in table:
        kw["intrinsics"] = tuple(os.path.normpath(os.path.join(root, p)) for p in
                                 _strings(table["intrinsics"], "intrinsics", where))
    if "warn-unused-ignores" in table:
        if not isinstance(table["warn-unused-ignores"], bool):
            raise ConfigError(f"{where} warn-unused-ignores must be true or false")
        kw["warn_unused_ignores"] = table["warn-unused-ignores"]
    if "cache-dir" in table:
        if not isinstance(table["cache-dir"], str):
            raise ConfigError(f"{where} cache-dir must be a string")
        kw["cache_dir"] = os.path.normpath(os.path.join(root, table["cache-dir"]))
    if "constants" in table:
        consts = table["constants"]
        if not isinstance(consts, dict) or set(consts) - {"inline-threshold"}:
            raise ConfigError(f"{where} constants takes one key, inline-threshold")
        thr = consts.get("inline-threshold", 64)
        if not isinstance(thr, int) or isinstance(thr, bool) or thr < 0:
            raise ConfigError(f"{where} constants.inline-threshold must be an integer >= 0")
        kw["inline_threshold"] = thr
    return Config(**kw)


def _target(value, where):
    from .. import target as targets
    if not isinstance(value, str) or targets.get(value) is None:
        raise ConfigError(f"{where} unknown target {value!r} (known: "
                          f"{', '.join(targets.names())})")
    return value


def _strings(value, key, where) -> tuple:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} {key} must be a list of strings")
    return tuple(value)


def _patterns(value, key, where) -> tuple:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    pats = _strings(value, key, where)
    bad = [p for p in pats if not codes.valid(p)]
    if bad:
        raise ConfigError(f"{where} {key}: {bad[0]!r} is not a code or a code family "
                          "(e.g. 'bounds/out-of-bounds', 'thread/', 'all')")
    return pats
