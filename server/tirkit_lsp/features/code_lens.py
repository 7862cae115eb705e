"""A code lens on each kernel: its FLOPs and roofline time on the configured target."""
from __future__ import annotations

from lsprotocol import types as T

from tirkit.analysis.cost import format_seconds, roofline_seconds

from .tune_kernel import tune_lenses


def code_lenses(server, a) -> list:
    if not a.has_kernels:
        return []
    conv = server.converter(a)
    out = []
    for f in a.functions():
        if f.span is None:
            continue
        target = server.settings.roofline_target(f)
        cost = a.costs(f).total
        flops = cost.flops.value
        ftext = f"{flops:,}" if flops is not None else str(cost.flops)
        title = (f"{ftext} FLOPs · ~{format_seconds(roofline_seconds(cost, target))} "
                 f"on {target}")
        span = f.header_span or f.span
        out.append(T.CodeLens(range=conv.range(span),
                              command=T.Command(title=title, command="")))
    return out + tune_lenses(server, a)


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_CODE_LENS, T.CodeLensOptions(resolve_provider=False),
                         default=list)
    async def lenses(params: T.CodeLensParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return []
        return await server.run_sync(code_lenses, server, a)
