"""`tirkit check | fmt | run | bench | config | clean | lsp`."""
from __future__ import annotations

import argparse
import os
import sys

from . import __version__


def _files(paths):
    """The `.py` files under `paths` (folders walked, the configuration's excludes
    skipped); files named directly as they are."""
    from .project.tree import Resolver, files
    return files(paths, Resolver({}))


def _read(path):
    with open(path, "rb") as fh:
        return fh.read()


def cmd_check(args) -> int:
    from .project.commands import run_check
    return run_check(args)


def cmd_fmt(args) -> int:
    from .project.commands import fmt_threshold, print_diff
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
        sink = sink_for_script(text, path, fmt_threshold(path, args.inline_threshold))
        new, skipped = format_text(text, path, params=sink)
        for name in skipped:
            print(f"{path}: kernel '{name}' has errors; left as it is", file=sys.stderr)
        if new != text:
            changed += 1
            if args.diff:
                print_diff(path, text, new)
            elif args.check:
                print(f"would reformat {path}")
            else:
                if sink.commit():          # the data first: the text never names missing data
                    print(f"wrote {sink.path}")
                _atomic_write(path, new)
                print(f"reformatted {path}")
    if args.check or args.diff:
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
    from .project import commands as project_commands
    ap = argparse.ArgumentParser(prog="tirkit", description="Check, format, run and benchmark "
                                 "TensorIR kernels written in TVMScript.")
    ap.add_argument("--version", action="version", version=f"tirkit {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="report diagnostics for files or folders")
    c.add_argument("paths", nargs="+")
    c.add_argument("--format", choices=project_commands.FORMATS, default="text")
    c.add_argument("--target", default=None, help="target name (e.g. cuda-sm80, llvm)")
    c.set_defaults(fn=cmd_check)
    project_commands.add_check_options(c)
    f = sub.add_parser("fmt", help="rewrite kernels in canonical form (the rest of the file "
                       "is left as it is)")
    f.add_argument("paths", nargs="+")
    f.add_argument("--check", action="store_true", help="exit 1 when a file would change")
    f.add_argument("--diff", action="store_true", help="print what would change as a unified "
                   "diff, write nothing; exit 1 when a file would change")
    f.add_argument("--inline-threshold", type=int, default=None, metavar="N",
                   help="constants of more than N elements go to the script's .params file "
                   "(default: constants.inline-threshold of the configuration, or 64)")
    f.set_defaults(fn=cmd_fmt)
    from .codegen import cli as codegen_cli
    codegen_cli.add_commands(sub)
    from .schedule.tensorize import cli as tensorize_cli
    tensorize_cli.add_commands(sub)
    from .cost import cli as cost_cli
    cost_cli.add_commands(sub)
    project_commands.add_commands(sub)
    from .tune import cli as tune_cli
    tune_cli.add_commands(sub)
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
    except project_commands.ConfigError as e:
        print(f"tirkit: {e}", file=sys.stderr)
        return 2
    except Exception as e:                  # never a traceback: exit 2, as documented
        print(f"tirkit: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


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
