"""Split a Python file into kernel chunks without parsing the rest of it.

A kernel is a definition decorated with `@<tir>.prim_func` or `@<ir>.ir_module`, where the
aliases come from the file's imports (`from tvm.script import tir as T`, `tirx`, our own
`tirkit.script`, or the qualified `tvm.script.ir_module`).  Kernels may sit at any depth
(inside a test function, say); each is dedented and parsed alone.  Nothing else in the file
is read beyond its imports and top-level constants (syntax/constants.py).

An `@I.ir_module` class is split further into parts (syntax/class_parts.py): its decorators
and `class` line, then one part per method (with the comments above it), so that an edit
inside one function of a module re-parses and re-lowers that function alone.  The scan is linear in the file and its
costly steps (where a definition ends, dedenting) are memoised by the text they read, so an
unchanged definition costs a dictionary look-up, wherever it moved in the file.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field


_IMPORT_FROM = re.compile(
    r"^\s*from\s+(tvm\.script|tirkit\.script)\s+import\s+(\(?)([^#\n]*)")
_IMPORT_AS = re.compile(r"^\s*import\s+(tvm\.script\.(?:tir|tirx|ir)|"
                        r"tirkit\.script\.(?:tir|ir|params))"
                        r"\s+as\s+(\w+)")
_DECORATOR = re.compile(r"^([ \t]*)@\s*([\w.]+)")
_HEAD = re.compile(r"^([ \t]*)(async\s+def|def|class)\b")


@dataclass
class Aliases:
    tir: dict = field(default_factory=dict)     # alias -> "tir" | "tirx" | "tirkit"
    ir: set = field(default_factory=set)
    params: set = field(default_factory=set)    # aliases of tirkit.script.params


@dataclass
class Chunk:
    kind: str                # "prim_func" | "ir_module"
    start_line: int          # 1-based file line of the first decorator
    end_line: int            # last line of the definition (inclusive)
    col_offset: int          # characters removed from the front of each line (dedent)
    text: str                # dedented source, ending in a newline
    spelling: str            # "classic" | "tirx"
    name: str = ""
    # an @I.ir_module class: its header (kind "class") and one part per method (kind
    # "method"), each dedented to column 0 and covering the lines from the end of the part
    # before it; empty when the class is not a plain header followed by methods
    parts: tuple = ()
    method_names: tuple = ()  # every `def` of the class, in order (calls between functions)


def find_aliases(lines) -> Aliases:
    al = Aliases()
    for line in lines:
        if "import" not in line:
            continue
        m = _IMPORT_FROM.match(line)
        if m:
            pkg = m.group(1)
            for part in m.group(3).strip().rstrip(")").split(","):
                bits = part.split()
                if not bits:
                    continue
                mod = bits[0]
                alias = bits[2] if len(bits) >= 3 and bits[1] == "as" else mod
                if mod in ("tir", "tirx"):
                    al.tir[alias] = "tirkit" if pkg == "tirkit.script" else mod
                elif mod == "ir":
                    al.ir.add(alias)
                elif mod == "params" and pkg == "tirkit.script":
                    al.params.add(alias)
            continue
        m = _IMPORT_AS.match(line)
        if m:
            mod = m.group(1).rsplit(".", 1)[1]
            if mod == "params":
                al.params.add(m.group(2))
            elif mod == "ir":
                al.ir.add(m.group(2))
            else:
                al.tir[m.group(2)] = mod
    if not al.tir and not al.ir:
        al.tir["T"] = "tir"
        al.ir.add("I")
    return al


def find_aliases_in(text: str) -> Aliases:
    """`find_aliases` of a whole text, reading only its lines that import."""
    lines = []
    i = text.find("import")
    while i >= 0:
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        lines.append(text[text.rfind("\n", 0, i) + 1:end])
        i = text.find("import", end)
    return find_aliases(lines)


def kernel_kind(dotted: str, al: Aliases):
    """'prim_func' / 'ir_module' when a decorator's dotted name makes a kernel."""
    head, _, last = dotted.rpartition(".")
    if last == "prim_func" and (head in al.tir or head in ("tvm.script.tir", "tvm.script.tirx",
                                                           "tirkit.script.tir")):
        return "prim_func"
    if last == "ir_module" and (head in al.ir or head in ("tvm.script", "tvm.script.ir",
                                                          "tirkit.script.ir")):
        return "ir_module"
    return None


_STR_OR_COMMENT = re.compile(r'"""|\'\'\'|#|"(?:[^"\\]|\\.)*"?|\'(?:[^\'\\]|\\.)*\'?')


def _strip_strings_and_comment(line: str, state: list) -> str:
    """Code of one line with string contents blanked; `state[0]` carries an open
    triple-quoted string across lines.  Lines outside strings are memoised: re-checking an
    edited file meets the same lines again."""
    if state[0] is None:
        code, state[0] = _strip_fresh(line)
        return code
    return _strip(line, state)


@functools.lru_cache(maxsize=100_000)
def _strip_fresh(line: str):
    """`_strip` of a line that starts outside any string: (code, open string after it)."""
    state = [None]
    return _strip(line, state), state[0]


def _strip(line: str, state: list) -> str:
    prefix = ""
    if state[0]:
        j = line.find(state[0])
        if j < 0:
            return ""
        line, prefix, state[0] = line[j + 3:], '""', None
    if '"' not in line and "'" not in line and "#" not in line:
        return prefix + line
    out = [prefix]
    pos = 0
    while True:
        m = _STR_OR_COMMENT.search(line, pos)
        if m is None:
            out.append(line[pos:])
            break
        out.append(line[pos:m.start()])
        tok = m.group()
        if tok == "#":
            break
        if tok in ('"""', "\'\'\'"):
            j = line.find(tok, m.end())
            if j < 0:
                state[0] = tok
                break
            out.append('""')
            pos = j + 3
            continue
        out.append('""')
        pos = m.end()
    return "".join(out)


def _indent(line: str) -> int:
    if "\t" not in line:
        return len(line) - len(line.lstrip())
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


_NEW_DEF = re.compile(r"^\s*(@|def\b|class\b|async\b|from\b|import\b|if\s+__name__)")


def _scan_line(raw: str, state: list, depth: int) -> tuple:
    """(whether the line holds code or string content, bracket depth after it); `state`
    carries an open triple-quoted string from line to line."""
    code = _strip_strings_and_comment(raw, state)
    opens = code.count("(") + code.count("[") + code.count("{")
    closes = code.count(")") + code.count("]") + code.count("}")
    if opens or closes:
        depth = max(0, depth + opens - closes)
    return bool(code.strip() or state[0]), depth


def _definition_end(lines, head_idx: int, base: int) -> int:
    """Index of the last line of the definition whose header is at head_idx."""
    depth = 0
    state = [None]
    last_code = head_idx
    i = head_idx
    n = len(lines)
    while i < n:
        raw = lines[i]
        stripped = raw.strip()
        if i > head_idx and state[0] is None and stripped and not stripped.startswith("#"):
            if _indent(raw) <= base and (depth == 0 or _NEW_DEF.match(raw)) \
                    and not stripped[0] in ")]}":
                break
        has_code, depth = _scan_line(raw, state, depth)
        if has_code:
            last_code = i
        i += 1
    return last_code


_DECORATOR_LINE = re.compile(r"\n[ \t]*@")


@functools.lru_cache(maxsize=64)
def _end_candidates(width: int):
    """Lines that may end a definition whose header is indented `width` spaces: code (not a
    comment, not a closing bracket) indented at most as much."""
    return re.compile(r"\n {0,%d}[^ \t\r\n\f\v#)\]}]" % width)


@functools.lru_cache(maxsize=16384)
def _region_end(region: str, base: int, next_is_def) -> tuple | None:
    """Scan the lines from a definition's header up to the first line that may end it;
    (index of its last code line, characters up to that line's end) if that line does end
    it (not inside a string, and outside brackets or the start of a new definition), else
    None.  `next_is_def` is None at the end of the file."""
    state = [None]
    depth = 0
    last_code = 0
    lines = region.split("\n")
    for i, raw in enumerate(lines):
        has_code, depth = _scan_line(raw, state, depth)
        if has_code:
            last_code = i
    if next_is_def is None or (state[0] is None and (depth == 0 or next_is_def)):
        return last_code, sum(map(len, lines[:last_code + 1])) + last_code
    return None


def _line_at(text: str, off: int) -> str:
    end = text.find("\n", off)
    return text[off:end if end >= 0 else len(text)]


def _next_line(text: str, off: int):
    """Offset of the line after the one starting at `off`; None after the last line."""
    end = text.find("\n", off)
    return end + 1 if end >= 0 else None


def _def_end_at(text: str, head_off: int, base: int) -> tuple | None:
    """Where the definition whose header line starts at `head_off` ends: (its last line,
    counted from the header, the offset just past that line), found by a search for the
    next line that may end it and a memoised scan of the lines before it; None when that
    line does not end it (a string or brackets still open: scan line by line instead).
    Indentation by spaces only."""
    nl = text.find("\n", head_off)
    if nl < 0:
        return 0, len(text)
    m = _end_candidates(base).search(text, nl)
    if m is None:
        found = _region_end(text[head_off:], base, None)
    else:
        cand = m.start() + 1
        found = _region_end(text[head_off:cand - 1], base,
                            bool(_NEW_DEF.match(_line_at(text, cand))))
    if found is None:
        return None
    return found[0], head_off + found[1]


@functools.lru_cache(maxsize=16384)
def _dedent(region: str, indent: str) -> str:
    ded = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip()
           for ln in region.split("\n")]
    return "\n".join(ded) + "\n"


@functools.lru_cache(maxsize=16384)
def _spelling(chunk_text: str, tirx_import: bool) -> str:
    """"tirx" or "classic": by the block statements a kernel uses, else by its import (memoised:
    the dedented text of an unchanged definition is the very same string, its hash kept)."""
    if re.search(r"\.sblock\b", chunk_text):
        return "tirx"
    if re.search(r"\.block\(", chunk_text):
        return "classic"
    return "tirx" if tirx_import else "classic"


def find_chunks(text: str) -> tuple[list[Chunk], Aliases]:
    """The kernels of a file, with its aliases.  The file is never split into lines: a
    search finds each decorator, newlines are counted between the places it stops at."""
    al = find_aliases_in(text)
    plain = not any(c in text for c in "\t\f\v")     # indentation by spaces only
    chunks: list[Chunk] = []
    full = None                     # the file split into lines, for the line-by-line scan
    line, off = 0, 0                # the scan stands at the start of this line
    while off is not None:
        if off > 0 or not _DECORATOR.match(_line_at(text, 0)):
            found = _DECORATOR_LINE.search(text, max(0, off - 1))
            if found is None:
                break
            line += text.count("\n", off, found.start() + 1)
            off = found.start() + 1
        m = _DECORATOR.match(_line_at(text, off))
        if not m:
            line, off = line + 1, _next_line(text, off)
            continue
        # the run of decorators starting here
        start, start_off = line, off
        indent_str = m.group(1)
        kind = None
        j, j_off = line, off
        while j_off is not None:
            lj = _line_at(text, j_off)
            mj = _DECORATOR.match(lj)
            if mj and mj.group(1) == indent_str:
                k = kernel_kind(mj.group(2), al)
                kind = kind or k
                j, j_off = j + 1, _next_line(text, j_off)
                # a decorator's arguments may span lines
                depth = lj.count("(") - lj.count(")")
                while depth > 0 and j_off is not None:
                    lj = _line_at(text, j_off)
                    depth += lj.count("(") - lj.count(")")
                    j, j_off = j + 1, _next_line(text, j_off)
                continue
            if not lj.strip() or lj.strip().startswith("#"):
                j, j_off = j + 1, _next_line(text, j_off)
                continue
            break
        if kind is None or j_off is None or not _HEAD.match(_line_at(text, j_off)):
            if j > line:
                line, off = j, j_off
            else:
                line, off = line + 1, _next_line(text, off)
            continue
        head_line = _line_at(text, j_off)
        base = _indent(_line_at(text, start_off))
        found = _def_end_at(text, j_off, base) if plain else None
        if found is not None:
            end, end_off = j + found[0], found[1]
        else:
            full = full or text.split("\n")
            end = _definition_end(full, j, base)
            end_off = sum(map(len, full[:end + 1])) + end
        width = len(indent_str)
        region = text[start_off:end_off]
        chunk_text = _dedent(region, indent_str)
        name_m = re.match(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)", head_line)
        spelling = _spelling(chunk_text, any(v == "tirx" for v in al.tir.values()))
        chunk = Chunk(kind, start + 1, end + 1, width, chunk_text, spelling,
                      name_m.group(1) if name_m else "")
        if kind == "ir_module" and plain:
            from .class_parts import placed_parts
            chunk.parts, chunk.method_names = placed_parts(region, j - start, indent_str,
                                                           start, spelling, chunk.name)
        chunks.append(chunk)
        line, off = end + 1, (end_off + 1 if end_off < len(text) else None)
    return chunks, al


_PARAMS_LOAD = re.compile(r"^([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\.load\(\s*(?:path\s*=\s*)?"
                          r"(?P<q>[\"'])(?P<path>[^\"'\\\n]*)(?P=q)\s*\)\s*(#.*)?$")


@dataclass
class ParamsLoad:
    """`NAME = params.load("file.params")` at the top of a file."""
    name: str
    path: str
    line: int                # 1-based
    end_column: int          # 1-based, exclusive: the end of the call


def find_params_loads(lines, al: Aliases) -> list:
    """The `.params` files a script opens through `tirkit.script.params` (read, not run)."""
    if not al.params:
        return []
    out = []
    for i, line in enumerate(lines):
        if ".load" not in line or not line[:1].isidentifier():
            continue
        m = _PARAMS_LOAD.match(line)
        if m and m.group(2) in al.params:
            out.append(ParamsLoad(m.group(1), m.group("path"), i + 1,
                                  len(line[:m.end(2)]) + len(line[m.end(2):].split("#")[0]
                                                             .rstrip()) + 1))
    return out
