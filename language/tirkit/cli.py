"""`tirkit check | fmt | run | bench | lsp`."""
from __future__ import annotations

import argparse
import json
import os
import sys

from . import __version__
from .diagnostics import Diagnostic, render_text


def _files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__"))
                                 and d not in ("node_modules", "build", "dist"))
                for f in sorted(files):
                    if f.endswith(".py"):
                        yield os.path.join(root, f)
        else:
            yield p


def _read(path):
    with open(path, "rb") as fh:
        return fh.read()


def cmd_check(args) -> int:
    from . import check
    from .script.parse import decode
    results = []
    errors = 0
    for path in _files(args.paths):
        try:
            data = _read(path)
        except OSError as e:
            results.append((path, "", [Diagnostic("io", "error", str(e.strerror or e),
                                                  _span1())]))
            errors += 1
            continue
        text, _ = decode(data)
        diags = check(data, path=path, target=args.target)
        errors += sum(d.severity == "error" for d in diags)
        results.append((path, text, diags))
    if args.format == "json":
        out = [d.to_json(path) for path, _, diags in results for d in diags]
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        n = 0
        for path, text, diags in results:
            for d in diags:
                print(render_text(path, text, d))
                n += 1
        files = len(results)
        print(f"{files} file{'s' if files != 1 else ''} checked, {errors} error"
              f"{'s' if errors != 1 else ''}, {n - errors} other diagnostic"
              f"{'s' if n - errors != 1 else ''}", file=sys.stderr)
    return 1 if errors else 0


def _span1():
    from .diagnostics import Span
    return Span(1, 1, 1, 2)


def cmd_fmt(args) -> int:
    from .script.format import format_text
    changed = 0
    for path in _files(args.paths):
        try:
            data = _read(path)
        except OSError as e:
            print(f"{path}: {e.strerror}", file=sys.stderr)
            return 2
        from .script.parse import decode
        text, bad = decode(data)
        if bad:
            print(f"{path}: not valid UTF-8; left as it is", file=sys.stderr)
            continue
        from .script.params_print import sink_for_script
        sink = sink_for_script(text, path, args.inline_threshold)
        new, skipped = format_text(text, path, params=sink)
        for name in skipped:
            print(f"{path}: kernel '{name}' has errors; left as it is", file=sys.stderr)
        if new != text:
            changed += 1
            if args.check:
                print(f"would reformat {path}")
            else:
                if sink.commit():          # the data first: the text never names missing data
                    print(f"wrote {sink.path}")
                _atomic_write(path, new)
                print(f"reformatted {path}")
    if args.check:
        return 1 if changed else 0
    return 0


def _atomic_write(path, text):
    import tempfile
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tirkit-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tirkit", description="Check, format, run and benchmark "
                                 "TensorIR kernels written in TVMScript.")
    ap.add_argument("--version", action="version", version=f"tirkit {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="report diagnostics for files or folders")
    c.add_argument("paths", nargs="+")
    c.add_argument("--format", choices=("text", "json"), default="text")
    c.add_argument("--target", default=None, help="target name (e.g. cuda-sm80, llvm)")
    c.set_defaults(fn=cmd_check)
    f = sub.add_parser("fmt", help="rewrite kernels in canonical form (the rest of the file "
                       "is left as it is)")
    f.add_argument("paths", nargs="+")
    f.add_argument("--check", action="store_true", help="exit 1 when a file would change")
    f.add_argument("--inline-threshold", type=int, default=64, metavar="N",
                   help="constants of more than N elements go to the script's .params file "
                   "(default 64)")
    f.set_defaults(fn=cmd_fmt)
    from .codegen import cli as codegen_cli
    codegen_cli.add_commands(sub)
    lsp = sub.add_parser("lsp", help="start the language server (`tirkit-lsp`; its options "
                         "follow)")
    lsp.set_defaults(fn=lambda a: _lsp(a.server_args))
    args, rest = ap.parse_known_args(argv)
    if rest and args.cmd != "lsp":
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    args.server_args = rest
    try:
        return args.fn(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def _lsp(server_args) -> int:
    """Start the server through its console script's entry point: the core does not import
    the server, and a missing server says what to install."""
    from importlib.metadata import entry_points
    found = list(entry_points(group="console_scripts", name="tirkit-lsp"))
    if not found:
        print("the language server is not installed: pip install 'tirkit[lsp]'",
              file=sys.stderr)
        return 2
    return found[0].load()(server_args) or 0


if __name__ == "__main__":
    sys.exit(main())
