"""Text -> IR: chunk the file, parse each kernel, lower it, gather diagnostics.

The work is cached per definition, so that re-checking an edited file costs what the edit
touched.  A definition is a top-level kernel or, inside an `@I.ir_module` class that
syntax/chunks.py split into parts, one method:
- its parse, by its dedented text (`parse_cached`), wherever it sits in the file;
- its lowering, by everything the lowering reads (text, column, spelling, the file's aliases
  and constants, for a method the class name and the methods it may call) and its first
  line: an unchanged definition comes back as the very same IR objects; one that moved
  (lines added or removed above it) is not lowered again: its last lowering is copied with
  every span and diagnostic moved to the new place (ir/shift.py; a function's program is
  copied when something first reads it).
`ParseResult.keys` names each function by its definition up to its place, so that rule
results survive moves (verify/).  The caches are bounded and thread-safe (the language
server parses from a thread pool); cached IR is never changed, only copied.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, Span
from ..ir.constants import ConstantTable
from ..ir.shift import moved_function
from ..ir.stmt import IRModule, PrimFunc
from ..lru import LRU
from ..syntax import cst as C
from ..syntax.chunks import Chunk, find_chunks
from ..syntax.class_parts import method_signatures
from ..syntax.parser import parse_chunk
from .collection import FREEZE_OBJECTS, CollectionPaused, thaw  # noqa: F401 - re-exported
from .file_constants import constants_seen
from .lower import Lowerer, LowerError

_parses = LRU(16384)          # dedented definition -> its ChunkParse
_lowered = LRU(32768)         # (definition, first line) -> _Lowered
_placed = LRU(32768)          # definition -> (first line, _Lowered): its latest place
_modules = LRU(4096)          # (@I.ir_module class split into parts, first line) -> lowered
_modules_placed = LRU(4096)   # the class -> (first line, lowered): its latest place
_tokens = LRU(65536)          # long key -> _Token


@dataclass
class Kernel:
    """One kernel definition of a file and what became of it."""
    chunk: Chunk
    functions: list                   # [(name, PrimFunc | ForeignFunc)]
    diagnostics: list
    syntax_ok: bool
    module_name: str | None = None    # class name of an @I.ir_module, None for a bare function
    cst: object = None                # None for a module read method by method
    # (token of the definition up to its place, its first line): one key, one kernel up to
    # a line shift; None when it is not cached
    key: tuple | None = None


@dataclass
class ParseResult:
    module: IRModule
    diagnostics: list = field(default_factory=list)
    kernels: list = field(default_factory=list)
    text: str = ""
    path: str | None = None
    # id(function) -> (key of its definition up to its place, the first line of that
    # definition): two functions with one key differ only by a line shift
    keys: dict = field(default_factory=dict)
    aliases: object = None            # the file's import aliases (syntax.chunks.Aliases)

    def has_errors(self, func) -> bool:
        """Whether reading `func` met an error inside it (an undefined name, a statement that
        could not be read): its IR is then partial, and what is estimated, predicted or run of
        it is not what the text says.  An error outside the kernel's own text, or one that
        did not stop its lowering (a bad byte in a comment, a missing `.params` file), does
        not count.  The kernels' texts do not overlap, so an error of any kernel's lowering
        that lies inside `func` is one of func's own."""
        sp = func.span
        return sp is not None and any(
            d.severity == "error" and d.span is not None
            and sp.contains(d.span.line, d.span.column)
            for k in self.kernels for d in k.diagnostics)


@dataclass(frozen=True)
class _Lowered:
    """What lowering one definition gave (cached)."""
    functions: tuple
    diagnostics: tuple
    syntax_ok: bool
    module_name: str | None
    cst: object
    key: object                       # the definition up to its place; None: not cacheable


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def decode(data) -> tuple[str, list]:
    """Source bytes -> text; invalid UTF-8 becomes a `syntax` diagnostic at its first byte.
    A str that holds lone surrogates (bytes decoded with `surrogateescape`, `\\udcXX` escapes
    in JSON) is text with bad bytes in it: each becomes U+FFFD, the first one the diagnostic."""
    if isinstance(data, str):
        if data.isascii():                 # constant time: no surrogate can be in it
            return data, []
        try:
            data.encode("utf-8")           # a C pass, where the search below is a slow one
            return data, []
        except UnicodeEncodeError:
            pass
        m = _LONE_SURROGATE.search(data)
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


def parse_cached(text: str, prefetch=None):
    """The parse of one dedented definition, by its text wherever it sits in the file;
    `prefetch` (script/parallel.py): parses made by worker processes, taken when ready."""
    hit = _parses.get(text)
    if hit is None:
        hit = prefetch.get(text) if prefetch is not None else None
        if hit is None:
            hit = parse_chunk(text)
        _parses.put(text, hit)
    return hit


def clear_caches() -> None:
    _parses.clear()
    _lowered.clear()
    _placed.clear()
    _modules.clear()
    _modules_placed.clear()
    _tokens.clear()


def _file_key(aliases, path, py_constants):
    """What every definition's lowering reads from the rest of the file; None when it cannot
    be a cache key (a constant that is not hashable)."""
    try:
        key = (path, tuple(sorted(aliases.tir.items())), tuple(sorted(aliases.ir)),
               tuple(sorted(aliases.params)), tuple(sorted((py_constants or {}).items())))
        hash(key)
        return key
    except TypeError:
        return None


class _Token:
    """Stands for a longer cache key (a definition up to its place, the rest of a file),
    so that keys built from it hash and compare in constant time."""
    __slots__ = ()


def _intern(key) -> _Token:
    token = _tokens.get(key)
    if token is None:
        token = _Token()
        _tokens.put(key, token)
    return token


@dataclass
class _File:
    """What lowering one file's definitions shares."""
    aliases: object
    constants: ConstantTable
    path: str | None
    py_constants: dict
    token: object                     # the rest of the file; None: nothing is cached
    keys: dict                        # ParseResult.keys, being filled
    prefetch: object = None           # parses under way on worker processes, or None


class _Counts:
    """How often definitions were lowered and how often a lowering was moved instead:
    observable facts for tests and benchmarks (`lowering_counts()`)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._n = {"lowered": 0, "moved": 0}

    def add(self, what: str, n: int = 1) -> None:
        with self._lock:
            self._n[what] += n

    def snapshot(self) -> dict:
        with self._lock:
            return dict(self._n)


_counts = _Counts()


def lowering_counts() -> dict:
    """{"lowered": definitions lowered, "moved": functions whose cached lowering was moved
    to a new line}, counted since the process started."""
    return _counts.snapshot()


def _moved(low: _Lowered, lines: int) -> _Lowered:
    """A cached lowering `lines` lines further down: IR and diagnostics copied at the new
    place (a function's program when it is first read), the parse (relative to its
    definition) shared."""
    functions = tuple((name, moved_function(f, lines)) for name, f in low.functions)
    return _Lowered(functions, tuple(d.shifted(lines) for d in low.diagnostics),
                    low.syntax_ok, low.module_name, low.cst, low.key)


def _lower_cached(chunk: Chunk, file: _File, module=None) -> _Lowered:
    """The lowering of one definition, or its cached result when nothing it reads has
    changed (moved to the definition's line when that changed); one that added to the
    module's constant table is not kept (it must add again).
    `module`: (class chunk, token of what the method reads from its class) for a method."""
    if file.token is None:
        return _lower_definition(chunk, file, module, None)
    definition = (chunk.text, chunk.col_offset, chunk.spelling, chunk.kind, file.token,
                  module[1] if module is not None else None)
    line = chunk.start_line
    key = (*definition, line)
    hit = _lowered.get(key)
    if hit is not None:
        return hit
    placed = _placed.get(definition)
    if placed is not None:
        out = _moved(placed[1], line - placed[0])
        _counts.add("moved", len(out.functions))
    else:
        n = len(file.constants)
        out = _lower_definition(chunk, file, module, _intern(definition))
        if len(file.constants) != n:
            return out
    _lowered.put(key, out)
    _placed.put(definition, (line, out))
    return out


def lower_kernel(chunk: Chunk, aliases, constants, path=None, py_constants=None) -> Kernel:
    """Parse and lower one kernel (a module split into methods: each method); an unchanged
    definition is taken from the cache, so an edit re-lowers only what it touched."""
    file_key = _file_key(aliases, path, py_constants)
    return _lower_chunk(chunk, _File(aliases, constants, path, py_constants,
                                     _intern(file_key) if file_key is not None else None, {}))


def _lower_chunk(chunk: Chunk, file: _File) -> Kernel:
    if chunk.parts:
        return _lower_module(chunk, file)
    low = _lower_cached(chunk, file)
    _note_keys(low, chunk, file.keys)
    return Kernel(chunk, list(low.functions), list(low.diagnostics), low.syntax_ok,
                  low.module_name, low.cst,
                  (low.key, chunk.start_line) if low.key is not None else None)


def _note_keys(low: _Lowered, chunk: Chunk, keys: dict) -> None:
    if low.key is not None:
        for _, f in low.functions:
            keys[id(f)] = (low.key, chunk.start_line)


def _moved_module(entry, lines: int):
    """A cached @I.ir_module class (`_modules` entry) `lines` lines further down."""
    functions, diags, syntax_ok, keyed, token = entry
    moved = {id(f): moved_function(f, lines) for _, f in functions}
    _counts.add("moved", len(moved))
    return (tuple((name, moved[id(f)]) for name, f in functions),
            tuple(d.shifted(lines) for d in diags), syntax_ok,
            tuple((moved[id(f)], part_token, line + lines) for f, part_token, line in keyed),
            token)


def _lower_module(chunk: Chunk, file: _File) -> Kernel:
    """An @I.ir_module class split into parts, method by method.  A method depends on the
    rest of the class only through the class name and, when it names the class, the names
    of its methods.  An unchanged class is one cache look-up."""
    key = None
    if file.token is not None:
        key = (chunk.text, chunk.col_offset, chunk.spelling, file.token, chunk.start_line)
        hit = _modules.get(key)
        if hit is None:
            placed = _modules_placed.get(key[:-1])
            if placed is not None:          # the whole class moved: move what it gave
                hit = _moved_module(placed[1], chunk.start_line - placed[0])
                _modules.put(key, hit)
                _modules_placed.put(key[:-1], (chunk.start_line, hit))
        if hit is not None:
            functions, diags, syntax_ok, keyed, token = hit
            for f, part_token, line in keyed:
                file.keys[id(f)] = (part_token, line)
            return Kernel(chunk, list(functions), list(diags), syntax_ok, chunk.name, None,
                          (token, chunk.start_line))
    n = len(file.constants)
    plain = _intern(("module", chunk.name, None))
    named = _intern(("module", chunk.name, frozenset(chunk.method_names),
                     frozenset(method_signatures(chunk.parts[1:]))))
    pieces = [(part, _lower_cached(part, file, (chunk, named if chunk.name in part.text
                                                 else plain)))
              for part in chunk.parts[1:]]
    if not all(low.syntax_ok for _, low in pieces):
        # as for any kernel with a syntax error: its syntax errors only, no functions
        functions, keyed = [], []
        diags = [d for _, low in pieces for d in low.diagnostics if d.code == "syntax"]
    else:
        functions, diags, keyed = [], [], []
        for part, low in pieces:
            functions.extend(low.functions)
            diags.extend(low.diagnostics)
            if low.key is not None:
                keyed.extend((f, low.key, part.start_line) for _, f in low.functions)
    for f, token, line in keyed:
        file.keys[id(f)] = (token, line)
    syntax_ok = all(low.syntax_ok for _, low in pieces)
    if key is None or len(file.constants) != n:
        return Kernel(chunk, functions, diags, syntax_ok, chunk.name, None)
    token = _intern(key[:-1])
    entry = (tuple(functions), tuple(diags), syntax_ok, tuple(keyed), token)
    _modules.put(key, entry)
    _modules_placed.put(key[:-1], (chunk.start_line, entry))
    return Kernel(chunk, functions, diags, syntax_ok, chunk.name, None,
                  (token, chunk.start_line))


def _lower_definition(chunk: Chunk, file: _File, module, key) -> _Lowered:
    """Parse and lower one definition; `module` is (the class chunk, its token) for a method
    of a module split into parts, else None."""
    _counts.add("lowered")
    aliases, constants, path = file.aliases, file.constants, file.path
    py_constants = file.py_constants
    parsed = parse_cached(chunk.text, file.prefetch)
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
        if module is not None:
            owner = module[0]
            low.module_class, low.module_funcs = owner.name, set(owner.method_names)
            low.module_returns = {n: r for n, r, _ in method_signatures(owner.parts[1:])}
            module_name = owner.name
            # a foreign function keeps its text as the class holds it
            first = chunk.start_line - owner.start_line
            class_lines = owner.text.split("\n")[first:first + len(lines)]
        for node in parsed.module.body:
            try:
                if module is not None:
                    functions.extend(low.lower_module_item(node, aliases, chunk.spelling,
                                                           class_lines))
                elif isinstance(node, C.FunctionDef):
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
    return _Lowered(tuple(functions), tuple(diags), syntax_ok, module_name,
                    parsed.module if parsed.module is not None else None, key)


def _prefetch(chunks, pool):
    """Send the definitions that no cache holds to `pool` when they are many (a cold open of
    a large file); None when they are parsed here."""
    from .parallel import Prefetch, wanted
    texts = [p.text for c in chunks for p in (c.parts[1:] if c.parts else (c,))
             if _parses.get(p.text) is None]
    return Prefetch(pool, texts) if wanted(texts) else None


def parse(text, path=None, pool=None) -> ParseResult:
    """Parse every kernel of a Python file; never raises on bad input.  `pool`: a process
    pool (concurrent.futures) that parses a large file's new definitions while this process
    lowers them (script/parallel.py); the result is the same with or without it."""
    text, diags = decode(text)
    bad_bytes = list(diags)
    chunks, aliases = find_chunks(text)
    seen, load_diags = constants_seen(text, chunks, aliases, path)
    diags.extend(load_diags)
    constants = ConstantTable()
    kernels = []
    functions = []
    keys: dict = {}
    prefetch = _prefetch(chunks, pool) if pool is not None else None

    def file_of(py_constants):        # what a definition reads from the rest of the file
        file_key = _file_key(aliases, path, py_constants)
        return _File(aliases, constants, path, py_constants,
                     _intern(file_key) if file_key is not None else None, keys, prefetch)
    module_name = None
    spelling = "classic"
    with CollectionPaused():
        try:
            for chunk, py_constants in zip(chunks, seen):
                file = file_of(py_constants)
                k = _lower_chunk(chunk, file)
                kernels.append(k)
                diags.extend(k.diagnostics)
                functions.extend(k.functions)
                if k.module_name and module_name is None:
                    module_name = k.module_name
                spelling = chunk.spelling
        finally:
            if prefetch is not None:
                prefetch.cancel()
    module = IRModule(tuple(functions), module_name, constants, (), None, spelling)
    if bad_bytes:
        # the decoding error already names the bad byte: no second error on the same spot
        spots = {(d.span.line, d.span.column) for d in bad_bytes}
        diags = bad_bytes + [d for d in diags[len(bad_bytes):]
                             if not (d.code == "syntax" and (d.span.line, d.span.column) in spots)]
    diags.sort(key=Diagnostic.sort_key)
    return ParseResult(module, diags, kernels, text, path, keys, aliases)


__all__ = ["parse", "ParseResult", "Kernel", "decode", "PrimFunc", "lowering_counts", "CollectionPaused",
           "thaw"]
