"""`tirkit.canonicalForm` (workspace/executeCommand): the canonical text of the kernel under a
position, as the printer writes it.  Arguments: the document URI and an LSP position
(`{"line", "character"}`).  Answers `{"text", "language", "kernel"}`, or `{"message"}` when
there is no kernel there or the kernel has errors."""
from __future__ import annotations

from tirkit.script.format import format_kernel
from tirkit.syntax.chunks import find_aliases

COMMAND = "tirkit.canonicalForm"


def _dedent(text: str) -> str:
    lines = text.split("\n")
    pad = min((len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()), default=0)
    return "\n".join(ln[pad:] for ln in lines)


def canonical_form(a, line0: int) -> dict:
    """The answer for 0-based `line0` of the analysed document."""
    k = a.kernel_at(line0 + 1)
    if k is None:
        return {"message": f"no kernel at line {line0 + 1}"}
    al = find_aliases(a.lines)
    text = format_kernel(k, a.result, next(iter(al.tir), "T"), next(iter(al.ir), "I"))
    if text is None:
        return {"message": f"kernel '{k.chunk.name}' has errors; fix them to see its canonical form"}
    return {"text": _dedent(text).rstrip("\n") + "\n", "language": "python", "kernel": k.chunk.name}


def _line_of(pos) -> int:
    if isinstance(pos, dict):
        pos = pos.get("line")
    else:
        pos = getattr(pos, "line", None)
    if not isinstance(pos, int) or pos < 0:
        raise ValueError("the second argument must be a position {line, character}")
    return pos


def setup(server) -> None:
    @server.command(COMMAND)
    async def run(*args):
        try:
            if len(args) < 2 or not isinstance(args[0], str):
                return {"message": "tirkit.canonicalForm wants a document URI and a position"}
            line0 = _line_of(args[1])
            a = await server.analysis(args[0])
            if a is None:
                return {"message": "the document is not open"}
            if not a.has_kernels:
                return {"message": "no kernel in this file"}
            return await server.run_sync(canonical_form, a, line0, title="tirkit: canonical form")
        except Exception as e:          # a failing command answers a message
            server.log_error(COMMAND, e)
            return {"message": f"could not print the kernel: {type(e).__name__}"}
