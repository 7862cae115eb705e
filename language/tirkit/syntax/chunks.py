"""Split a Python file into kernel chunks without parsing the rest of it.

A kernel is a definition decorated with `@<tir>.prim_func` or `@<ir>.ir_module`, where the
aliases come from the file's imports (`from tvm.script import tir as T`, `tirx`, our own
`tirkit.script`, or the qualified `tvm.script.ir_module`).  Kernels may sit at any depth
(inside a test function, say); each is dedented and parsed alone.  Nothing else in the file
is read beyond its imports and top-level literal constants.
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
_TOP_CONST = re.compile(r"^([A-Za-z_]\w*)\s*(?::\s*\w+\s*)?=\s*([^#\n]+?)\s*(#.*)?$")


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
        code = _strip_strings_and_comment(raw, state)
        if code.strip() or state[0]:
            last_code = i
        opens = code.count("(") + code.count("[") + code.count("{")
        closes = code.count(")") + code.count("]") + code.count("}")
        if opens or closes:
            depth = max(0, depth + opens - closes)
        i += 1
    return last_code


def find_chunks(text: str) -> tuple[list[Chunk], Aliases]:
    lines = text.split("\n")
    al = find_aliases(lines)
    chunks: list[Chunk] = []
    i, n = 0, len(lines)
    while i < n:
        m = _DECORATOR.match(lines[i])
        if not m:
            i += 1
            continue
        # the run of decorators starting here
        start = i
        indent_str = m.group(1)
        kind = None
        j = i
        while j < n:
            mj = _DECORATOR.match(lines[j])
            if mj and mj.group(1) == indent_str:
                k = kernel_kind(mj.group(2), al)
                kind = kind or k
                j += 1
                # a decorator's arguments may span lines
                depth = lines[j - 1].count("(") - lines[j - 1].count(")")
                while depth > 0 and j < n:
                    depth += lines[j].count("(") - lines[j].count(")")
                    j += 1
                continue
            if not lines[j].strip() or lines[j].strip().startswith("#"):
                j += 1
                continue
            break
        if kind is None or j >= n or not _HEAD.match(lines[j]):
            i = max(j, i + 1)
            continue
        base = _indent(lines[start])
        end = _definition_end(lines, j, base)
        body = lines[start:end + 1]
        width = len(indent_str)
        ded = [ln[width:] if ln.startswith(indent_str) else ln.lstrip() for ln in body]
        name_m = re.match(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)", lines[j])
        spelling = "classic"
        aliases = {a: v for a, v in al.tir.items()}
        if any(v == "tirx" for v in aliases.values()):
            spelling = "tirx"
        chunk_text = "\n".join(ded) + "\n"
        if re.search(r"\.sblock\b", chunk_text):
            spelling = "tirx"
        elif re.search(r"\.block\(", chunk_text):
            spelling = "classic"
        chunks.append(Chunk(kind, start + 1, end + 1, width, chunk_text, spelling,
                            name_m.group(1) if name_m else ""))
        i = end + 1
    return chunks, al


def top_level_constants(text: str) -> dict:
    """`NAME = <literal>` at column 0 (ints, floats, strings, tuples of them): the only
    outside values a kernel may use; read as literals, never executed."""
    import ast
    import warnings
    out = {}
    for line in text.split("\n"):
        if not line or line[0] in " \t#@":
            continue
        m = _TOP_CONST.match(line)
        if not m:
            continue
        try:
            with warnings.catch_warnings():     # e.g. an invalid escape in the user's string
                warnings.simplefilter("ignore")
                value = ast.literal_eval(m.group(2))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, (int, float, str, tuple)) and not isinstance(value, bool):
            out[m.group(1)] = value
    return out


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
