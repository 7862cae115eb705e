"""Text -> IR: chunk the file, parse each kernel (cached), lower it, gather diagnostics."""
from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, Span
from ..ir.constants import ConstantTable
from ..ir.stmt import IRModule, PrimFunc
from ..syntax import cst as C
from ..syntax.chunks import Chunk, find_chunks, top_level_constants
from ..syntax.parser import parse_chunk
from .lower import Lowerer, LowerError

_CACHE_SIZE = 512
_parse_cache: "OrderedDict[str, object]" = OrderedDict()
_kernel_cache: "OrderedDict[tuple, Kernel]" = OrderedDict()


@dataclass
class Kernel:
    """One kernel definition of a file and what became of it."""
    chunk: Chunk
    functions: list                   # [(name, PrimFunc | ForeignFunc)]
    diagnostics: list
    syntax_ok: bool
    module_name: str | None = None    # class name of an @I.ir_module, None for a bare function
    cst: object = None


@dataclass
class ParseResult:
    module: IRModule
    diagnostics: list = field(default_factory=list)
    kernels: list = field(default_factory=list)
    text: str = ""
    path: str | None = None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def decode(data) -> tuple[str, list]:
    """Source bytes -> text; invalid UTF-8 becomes a `syntax` diagnostic at its first byte.
    A str that holds lone surrogates (bytes decoded with `surrogateescape`, `\\udcXX` escapes
    in JSON) is text with bad bytes in it: each becomes U+FFFD, the first one the diagnostic."""
    if isinstance(data, str):
        m = _LONE_SURROGATE.search(data)
        if m is None:
            return data, []
        at = m.start()
        line = data.count("\n", 0, at) + 1
        col = at - (data.rfind("\n", 0, at) + 1) + 1
        o = ord(data[at])
        what = f"byte 0x{o - 0xdc00:02x}" if 0xdc80 <= o <= 0xdcff else f"lone surrogate U+{o:04X}"
        return _LONE_SURROGATE.sub("\ufffd", data), [
            Diagnostic("syntax", "error", f"the file is not valid UTF-8 ({what})",
                       Span(line, col, line, col + 1))]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as e:
        head = data[:e.start]
        line = head.count(b"\n") + 1
        col = len(head[head.rfind(b"\n") + 1:].decode("utf-8", "replace")) + 1
        text = data.decode("utf-8", "replace")
        return text, [Diagnostic("syntax", "error", f"the file is not valid UTF-8 (byte "
                                 f"0x{data[e.start]:02x})", Span(line, col, line, col + 1))]


def _cached_parse(text):
    r = _parse_cache.get(text)
    if r is None:
        r = parse_chunk(text)
        _parse_cache[text] = r
        if len(_parse_cache) > _CACHE_SIZE:
            _parse_cache.popitem(last=False)
    else:
        _parse_cache.move_to_end(text)
    return r


def _kernel_key(chunk: Chunk, aliases, path, py_constants):
    try:
        key = (chunk.text, chunk.start_line, chunk.col_offset, chunk.spelling, chunk.kind, path,
               tuple(sorted(aliases.tir.items())), tuple(sorted(aliases.ir)),
               tuple(sorted(aliases.params)), tuple(sorted((py_constants or {}).items())))
        hash(key)
        return key
    except TypeError:
        return None


def lower_kernel(chunk: Chunk, aliases, constants, path=None, py_constants=None) -> Kernel:
    """Parse and lower one kernel; an unchanged kernel (same text, place, aliases and
    constants) is taken from the cache, so an edit re-lowers only what it touched."""
    key = _kernel_key(chunk, aliases, path, py_constants)
    if key is not None:
        k = _kernel_cache.get(key)
        if k is not None:
            _kernel_cache.move_to_end(key)
            return k
    n_consts = len(constants) if constants is not None else 0
    k = _lower_kernel(chunk, aliases, constants, path, py_constants)
    # a kernel that added to the module's constant table must add again next time
    if key is not None and (constants is None or len(constants) == n_consts):
        _kernel_cache[key] = k
        if len(_kernel_cache) > _CACHE_SIZE:
            _kernel_cache.popitem(last=False)
    return k


def _lower_kernel(chunk: Chunk, aliases, constants, path=None, py_constants=None) -> Kernel:
    parsed = _cached_parse(chunk.text)
    off, col = chunk.start_line - 1, chunk.col_offset
    diags = [Diagnostic("syntax", "error", e.message,
                        Span(e.line + off, e.column + col, e.end_line + off, e.end_column + col,
                             path)) for e in parsed.errors]
    syntax_ok = not parsed.errors and parsed.module is not None
    functions = []
    module_name = None
    if parsed.module is not None and parsed.module.body:
        node = parsed.module.body[0]
        if isinstance(node, C.ClassDef):
            module_name = node.name
    if syntax_ok:
        lines = chunk.text.split("\n")
        low = Lowerer(path, off, col, tir_aliases=aliases.tir.keys(), ir_aliases=aliases.ir,
                      params_aliases=aliases.params, constants=py_constants, table=constants,
                      spelling=chunk.spelling, source_lines=lines, comments=parsed.comments,
                      base_dir=os.path.dirname(os.path.abspath(path)) if path else None)
        for node in parsed.module.body:
            try:
                if isinstance(node, C.FunctionDef):
                    functions.append((node.name, low.lower_prim_func(node, chunk.spelling)))
                elif isinstance(node, C.ClassDef):
                    functions.extend(low.lower_module(node, aliases, chunk.spelling, lines))
            except LowerError:
                pass
            except RecursionError:
                low.diag("syntax", "the kernel is nested too deeply to analyse", node)
            except Exception as e:  # noqa: BLE001 - a bug of ours must not become a traceback
                low.diag("internal", f"tirkit could not analyse this kernel ({type(e).__name__}: "
                         f"{e})", node)
        diags.extend(low.diagnostics)
    return Kernel(chunk, functions, diags, syntax_ok, module_name,
                  parsed.module if parsed.module is not None else None)


def parse(text, path=None) -> ParseResult:
    """Parse every kernel of a Python file; never raises on bad input."""
    text, diags = decode(text)
    bad_bytes = list(diags)
    chunks, aliases = find_chunks(text)
    py_constants = top_level_constants(text) if chunks else {}
    if chunks and aliases.params:
        from .params_ref import param_tables
        tables, load_diags = param_tables(text.split("\n"), aliases, path)
        py_constants.update(tables)
        diags.extend(load_diags)
    constants = ConstantTable()
    kernels = []
    functions = []
    module_name = None
    spelling = "classic"
    for chunk in chunks:
        k = lower_kernel(chunk, aliases, constants, path, py_constants)
        kernels.append(k)
        diags.extend(k.diagnostics)
        functions.extend(k.functions)
        if k.module_name and module_name is None:
            module_name = k.module_name
        spelling = chunk.spelling
    module = IRModule(tuple(functions), module_name, constants, (), None, spelling)
    if bad_bytes:
        # the decoding error already names the bad byte: no second error on the same spot
        spots = {(d.span.line, d.span.column) for d in bad_bytes}
        diags = bad_bytes + [d for d in diags[len(bad_bytes):]
                             if not (d.code == "syntax" and (d.span.line, d.span.column) in spots)]
    diags.sort(key=Diagnostic.sort_key)
    return ParseResult(module, diags, kernels, text, path)


__all__ = ["parse", "ParseResult", "Kernel", "decode", "PrimFunc"]
