"""Whole-tree checks: the files under the given paths (folders walked, excluded folders
skipped), each checked against the configuration found for it, unchanged files answered
from the result cache, the others checked on every core when there are many of them."""
from __future__ import annotations

import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Span
from . import cache as result_cache
from .config import Config, find_config_file, load

PARALLEL_FROM = 16          # fewer files to check than this run in this process


@dataclass
class FileResult:
    path: str
    diagnostics: list
    cached: bool = False


class Resolver:
    """The configuration of each file (one walk up per folder; explicit overrides on top)."""

    def __init__(self, overrides: dict, config_file=None, isolated=False):
        self.overrides = overrides
        self.fixed = None
        if isolated:
            self.fixed = Config().with_overrides(**overrides)
        elif config_file:
            self.fixed = load(config_file).with_overrides(**overrides)
        self._by_dir: dict = {}
        self._by_source: dict = {}
    def for_path(self, path) -> Config:
        if self.fixed is not None:
            return self.fixed
        d = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
        cfg = self._by_dir.get(d)
        if cfg is None:
            src = find_config_file(d)
            cfg = self._by_source.get(src)
            if cfg is None:
                cfg = (load(src) if src else Config()).with_overrides(**self.overrides)
                self._by_source[src] = cfg
            self._by_dir[d] = cfg
        return cfg


PARAMS_NAME = re.compile(rb"""["']([^"'\n]+\.params)["']""")


def params_stamp(path, data: bytes) -> str:
    """The `.params` files the script names (size and mtime, or missing): its constants
    diagnostics depend on them, so they are part of its cache key."""
    d = os.path.dirname(os.path.abspath(path))
    parts = []
    for name in sorted(set(PARAMS_NAME.findall(data))):
        p = os.path.join(d, os.fsdecode(name))
        try:
            st = os.stat(p)
            parts.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{p}:missing")
    return ";".join(parts)


def files(paths, resolver: Resolver):
    """The files to check: given files as they are, `.py` files under given folders."""
    for p in paths:
        if not os.path.isdir(p):
            yield p
            continue
        for root, dirs, names in os.walk(p):
            cfg = resolver.for_path(root)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                             and not cfg.excluded(os.path.join(root, d)))
            for f in sorted(names):
                full = os.path.join(root, f)
                if f.endswith(".py") and not cfg.excluded(full):
                    yield full


def _check_one(job):
    path, data, config, warn_unused = job
    from .pipeline import check_file
    try:
        _, diags = check_file(data, path, config, warn_unused)
    except Exception as e:          # a bug of tirkit's: reported on the file, never raised
        diags = [Diagnostic("internal", "information", f"tirkit could not check this file "
                            f"({type(e).__name__}: {e})", Span(1, 1, 1, 2))]
    return diags


def check_tree(paths, resolver: Resolver, warn_unused=None, use_cache=True, jobs=None,
               cache_folder=None) -> list:
    """[FileResult] in file order.  `jobs`: worker processes (None: every core)."""
    out, todo = [], []
    cache = None
    if use_cache:
        folder = cache_folder or resolver.for_path(os.getcwd()).cache_folder()
        cache = result_cache.ResultCache(folder)
    for path in files(paths, resolver):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as e:
            out.append(FileResult(path, [Diagnostic("io", "error", str(e.strerror or e),
                                                    Span(1, 1, 1, 2))]))
            continue
        cfg = resolver.for_path(path)
        res = FileResult(path, [])
        out.append(res)
        k = None
        if cache is not None:
            extra = params_stamp(path, data) if b".params" in data else ""
            k = result_cache.key(data, cfg.fingerprint(), f"unused={warn_unused};{extra}")
            hit = cache.get(os.path.abspath(path), k)
            if hit is not None:
                res.diagnostics, res.cached = hit, True
                continue
        todo.append((res, k, (path, data, cfg, warn_unused)))
    workers = jobs or os.cpu_count() or 1
    if len(todo) >= PARALLEL_FROM and workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            chunk = max(1, min(32, len(todo) // (workers * 8)))
            results = pool.map(_check_one, [j for _, _, j in todo], chunksize=chunk)
            for (res, _, _), diags in zip(todo, results):
                res.diagnostics = diags
    else:
        for res, _, job in todo:
            res.diagnostics = _check_one(job)
    if cache is not None:
        for res, k, _ in todo:
            if not any(d.code == "internal" for d in res.diagnostics):
                cache.put(os.path.abspath(res.path), k, res.diagnostics)
        cache.save()
    return out
