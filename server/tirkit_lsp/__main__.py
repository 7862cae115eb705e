"""`tirkit-lsp`: start the language server on stdio (default) or `--tcp HOST:PORT`."""
from __future__ import annotations

import argparse
import logging
import os
import sys


def protocol_streams():
    """The protocol's own copies of standard input and output; descriptors 0 and 1 then read
    /dev/null and write to standard error, so that neither a stray print of some library
    nor a process started by the server (the parse pool's) writes into the protocol stream
    or holds it open after the server has ended."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return proto_in, proto_out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tirkit-lsp",
                                 description="Language server for TensorIR kernels (TVMScript).")
    ap.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (the default)")
    ap.add_argument("--tcp", metavar="HOST:PORT", help="serve on a TCP socket (for debugging)")
    ap.add_argument("--log-file", help="write the server log to this file")
    ap.add_argument("--log-level", default="WARNING",
                    choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = ap.parse_args(argv)
    handlers = [logging.FileHandler(args.log_file)] if args.log_file else \
        [logging.StreamHandler(sys.stderr)]
    logging.basicConfig(level=getattr(logging, args.log_level), handlers=handlers,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        from .server import create_server
    except ImportError as e:
        if (e.name or "").split(".")[0] not in ("pygls", "lsprotocol"):
            raise
        print(f"tirkit-lsp needs pygls and lsprotocol ({e}): pip install 'tirkit[lsp]'",
              file=sys.stderr)
        return 2
    server = create_server()
    # the rules run on threads; a request (a hover) waits for the interpreter lock at each of
    # its steps, up to this interval each time (5 ms by default): a short one keeps answers
    # prompt while an analysis runs, for a cost of well under 1% of the analysis
    sys.setswitchinterval(0.0005)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        try:
            port_n = int(port)
        except ValueError:
            ap.error(f"--tcp wants HOST:PORT, got {args.tcp!r}")
        server.start_tcp(host or "127.0.0.1", port_n)
    else:
        from .stdio import LenientStdin
        proto_in, proto_out = protocol_streams()
        server.start_io(stdin=LenientStdin(proto_in), stdout=proto_out)
    # the connection ended (`exit`, or the client closed it): no analysis may hold the process
    from .features.lifecycle import exit_code, leave_soon, stop_work
    stop_work(server)
    leave_soon(exit_code(server))
    return 0


if __name__ == "__main__":
    sys.exit(main())
