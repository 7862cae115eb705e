"""The command line's project options: `tirkit check`'s configuration, suppression, report
and cache options, `tirkit config`, `tirkit clean` and `tirkit fmt --diff`.

Exit codes: 0 nothing at error severity found (or `--exit-zero`), 1 errors found (or, for
`fmt --check`/`--diff`, a file would change), 2 a usage or configuration problem or an
internal error.
"""
from __future__ import annotations

import difflib
import json
import os
import sys

from ..diagnostics import render_text
from .config import ConfigError, resolve

FORMATS = ("text", "json", "sarif", "github")


def add_check_options(c) -> None:
    c.add_argument("--select", action="append", default=None, metavar="CODES",
                   help="report only these codes or families (comma-separated; replaces the "
                   "configuration's select)")
    c.add_argument("--ignore", action="append", default=None, metavar="CODES",
                   help="do not report these codes or families (added to the configuration's "
                   "ignore)")
    c.add_argument("--config", default=None, metavar="FILE",
                   help="use this pyproject.toml or tirkit.toml instead of the one found by "
                   "walking up from each file")
    c.add_argument("--isolated", action="store_true",
                   help="ignore every configuration file")
    c.add_argument("--warn-unused-ignores", action="store_true", default=None,
                   help="report `# tirkit: ignore` comments that silence nothing "
                   "(suppression/unused)")
    c.add_argument("--statistics", action="store_true",
                   help="print the number of diagnostics of each code instead of each one")
    c.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when errors are found")
    c.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the result cache")
    c.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="the result cache's folder (default: .tirkit_cache at the project "
                   "root; also TIRKIT_CACHE_DIR)")
    c.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="worker processes for many files (default: every core)")


def _overrides(args) -> dict:
    def codes(v):
        return ",".join(v) if v else None
    return {"target": getattr(args, "target", None), "select": codes(args.select),
            "ignore": codes(args.ignore), "warn_unused_ignores": args.warn_unused_ignores,
            "cache_dir": args.cache_dir or os.environ.get("TIRKIT_CACHE_DIR") or None}


def run_check(args) -> int:
    """`tirkit check`."""
    from .tree import Resolver, check_tree
    if args.jobs is not None and args.jobs < 1:
        print("tirkit: --jobs takes a number of processes, at least 1", file=sys.stderr)
        return 2
    if args.statistics and args.format in ("sarif", "github"):
        print(f"tirkit: --statistics does not combine with --format {args.format}",
              file=sys.stderr)
        return 2
    resolver = Resolver(_overrides(args), args.config, args.isolated)
    here = resolver.for_path(os.getcwd())
    results = check_tree(args.paths, resolver, use_cache=not args.no_cache, jobs=args.jobs,
                         cache_folder=here.cache_folder())
    pairs = [(r.path, r.diagnostics) for r in results]
    errors = sum(d.severity == "error" for _, diags in pairs for d in diags)
    total = sum(len(diags) for _, diags in pairs)
    if args.statistics:
        from .formats import statistics, statistics_text
        rows = statistics(pairs)
        if args.format == "json":
            json.dump([{"code": c, "severity": s, "count": n} for n, c, s in rows],
                      sys.stdout, indent=1)
            sys.stdout.write("\n")
        elif rows:
            print(statistics_text(rows))
    elif args.format == "json":
        json.dump([d.to_json(p) for p, diags in pairs for d in diags], sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.format == "sarif":
        from .sarif import sarif_log
        json.dump(sarif_log(pairs), sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.format == "github":
        from .formats import github_line
        for p, diags in pairs:
            for d in diags:
                print(github_line(p, d))
    else:
        for p, diags in pairs:
            if diags:
                text = _text(p)
                for d in diags:
                    print(render_text(p, text, d))
    if args.format == "text":
        files = len(results)
        cached = sum(r.cached for r in results)
        note = f" ({cached} unchanged, from the cache)" if cached else ""
        print(f"{files} file{'s' if files != 1 else ''} checked{note}, {errors} error"
              f"{'s' if errors != 1 else ''}, {total - errors} other diagnostic"
              f"{'s' if total - errors != 1 else ''}", file=sys.stderr)
    return 1 if errors and not args.exit_zero else 0


def _text(path) -> str:
    from ..script.parse import decode
    try:
        with open(path, "rb") as fh:
            return decode(fh.read())[0]
    except OSError:
        return ""


# ---------------------------------------------------------------------- fmt
def fmt_threshold(path, given):
    """The `.params` threshold for `path`: the option, else the configuration's."""
    return given if given is not None else resolve(path).inline_threshold


def print_diff(path, old: str, new: str) -> None:
    sys.stdout.writelines(difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True),
        fromfile=f"{path}", tofile=f"{path} (formatted)"))


# ---------------------------------------------------------------------- config, clean
def add_commands(sub) -> None:
    cfg = sub.add_parser("config", help="print the configuration that applies to a file")
    cfg.add_argument("path", nargs="?", default=".",
                     help="a file or folder (default: the current folder)")
    cfg.add_argument("--format", choices=("toml", "json"), default="toml")
    cfg.set_defaults(fn=cmd_config)
    cl = sub.add_parser("clean", help="remove the result cache of `tirkit check`")
    cl.add_argument("--cache-dir", default=None, metavar="DIR")
    cl.set_defaults(fn=cmd_clean)


def cmd_config(args) -> int:
    cfg = resolve(args.path)
    d = cfg.to_dict()
    if args.format == "json":
        json.dump(d, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    print(f"# {cfg.source or 'no configuration file found: the defaults'}")
    print(f"# project root: {cfg.root or os.getcwd()}")
    d.pop("source")
    d.pop("root")
    for k, v in d.items():
        if v is None:
            print(f"# {k}: not set")
        elif not isinstance(v, dict):
            print(f"{k} = {_toml(v)}")
    for k, v in d.items():
        if isinstance(v, dict):
            print(f"\n[{k}]")
            for kk, vv in v.items():
                key = kk if kk.replace("-", "").replace("_", "").isalnum() else json.dumps(kk)
                print(f"{key} = {_toml(vv)}")
    return 0


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v)


def cmd_clean(args) -> int:
    from .cache import clear
    folder = args.cache_dir or os.environ.get("TIRKIT_CACHE_DIR") or \
        resolve(os.getcwd()).cache_folder()
    try:
        removed = clear(folder)
    except OSError as e:
        print(f"tirkit: {e}", file=sys.stderr)
        return 2
    print(f"removed {folder}" if removed else f"no cache at {folder}")
    return 0


__all__ = ["FORMATS", "ConfigError", "add_check_options", "run_check", "add_commands",
           "fmt_threshold", "print_diff"]
