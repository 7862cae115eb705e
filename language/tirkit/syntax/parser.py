"""Parse one kernel chunk with lark, recovering from every syntax error.

Recovery: on an error the offending logical line is replaced by a placeholder of the same
indentation (``pass``, or ``if 0:`` for a block header) and the chunk is parsed again, so
each error is reported once, on its own line, and the rest of the chunk is still read.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

from . import cst as C
from .builder import CSTBuilder
from .indenter import Indenter, IndentationError_

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")
MAX_ERRORS = 25

_lock = threading.Lock()
_parsers: dict = {}                   # compiled (bool) -> Lark, built once per process
_indenter = Indenter()


def _cache_path(compiled: bool) -> str:
    text = GRAMMAR_PATH.read_bytes()
    digest = hashlib.sha256(text).hexdigest()[:16]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    d = os.path.join(base, "tirkit")
    try:
        os.makedirs(d, exist_ok=True)
        probe = os.path.join(d, ".w")
        with open(probe, "w"):
            pass
    except OSError:
        d = tempfile.gettempdir()
    return os.path.join(d, f"grammar-{digest}{'-cy' if compiled else ''}.lark.cache")


def _compiled_plugins():
    """lark-cython's LALR parser and lexers (the `fast` extra), or None: the same tables run
    by compiled code, about twice as fast; without it, or with TIRKIT_PURE_LARK=1 in the
    environment, lark's own Python parser reads the same grammar."""
    if os.environ.get("TIRKIT_PURE_LARK"):
        return None
    try:
        import lark_cython
    except ImportError:
        return None
    base = lark_cython.plugins["ContextualLexer"]

    class IndentingLexer(base):
        """lark-cython's contextual lexer with the indenter behind it: lark's post-lexer hook
        cannot carry the compiled lexer, whose parser pulls one token at a time.  Newlines
        pass in every state; each parse (a new lexer state) starts a new indenter stream."""

        def __new__(cls, conf, states, always_accept=()):
            # the compiled class takes its arguments at allocation
            self = super().__new__(cls, conf, states, always_accept=Indenter.always_accept)
            self._streams = threading.local()
            return self

        def __init__(self, *args, **kwargs):
            pass

        def _raw(self, lexer_state, parser_state):
            while True:
                try:
                    yield base.next_token(self, lexer_state, parser_state)
                except EOFError:
                    return

        def next_token(self, lexer_state, parser_state):
            streams = self._streams
            if getattr(streams, "state", None) is not lexer_state:
                streams.state = lexer_state
                streams.tokens = _indenter.process(self._raw(lexer_state, parser_state))
            try:
                return next(streams.tokens)
            except StopIteration:
                streams.state = None
                raise EOFError(self) from None

    return dict(lark_cython.plugins, ContextualLexer=IndentingLexer)


def get_parser(compiled: bool | None = None) -> Lark:
    """The LALR parser, built once per process and cached on disk between processes;
    `compiled`: with lark-cython (None: when it is installed), else pure lark."""
    plugins = _compiled_plugins() if compiled is not False else None
    if compiled and plugins is None:
        raise RuntimeError("lark-cython is not installed")
    key = plugins is not None
    parser = _parsers.get(key)
    if parser is None:
        with _lock:
            parser = _parsers.get(key)
            if parser is None:
                extra = {"_plugins": plugins} if plugins is not None else {}
                parser = Lark(
                    GRAMMAR_PATH.read_text(),
                    parser="lalr",
                    lexer="contextual",
                    postlex=None if plugins is not None else _indenter,
                    start="file_input",
                    keep_all_tokens=True,
                    maybe_placeholders=False,
                    propagate_positions=False,
                    transformer=CSTBuilder(),
                    cache=_cache_path(key),
                    **extra,
                )
                _parsers[key] = parser
    return parser


@dataclass
class SyntaxIssue:
    message: str
    line: int          # chunk-relative, 1-based
    column: int
    end_line: int
    end_column: int


@dataclass
class ChunkParse:
    module: C.Module | None
    errors: list = field(default_factory=list)      # [SyntaxIssue]
    comments: list = field(default_factory=list)    # [(line, column, text)], chunk-relative


_TOKEN_WORDS = {
    "_NEWLINE": "end of line", "_INDENT": "indent", "_DEDENT": "dedent", "$END": "end of input",
}


def _describe_token(tok: Token) -> str:
    if tok.type in _TOKEN_WORDS:
        return _TOKEN_WORDS[tok.type]
    return repr(tok.value)


def _error_issue(e, state, text_lines) -> SyntaxIssue:
    """Turn a lark exception into a message and a precise range."""
    brackets = state.brackets if state else []
    if isinstance(e, IndentationError_):
        return SyntaxIssue(e.message, e.line, e.column, e.line, max(e.end_column, e.column + 1))
    if isinstance(e, UnexpectedCharacters):
        line, col = e.line, e.column
        ch = text_lines[line - 1][col - 1:col] if 0 < line <= len(text_lines) else "?"
        if ch in "\"'":
            return SyntaxIssue("unterminated string literal", line, col, line,
                               len(text_lines[line - 1]) + 1)
        return SyntaxIssue(f"invalid character {ch!r}", line, col, line, col + 1)
    tok = getattr(e, "token", None)
    if isinstance(e, UnexpectedEOF) or tok is None or tok.type == "$END":
        if brackets:
            b = brackets[-1]
            return SyntaxIssue(f"'{b.value}' was never closed", b.line, b.column, b.line,
                               b.column + 1)
        n = len(text_lines)
        return SyntaxIssue("unexpected end of input", n, 1, n, 2)
    prev = _prev_token(state)
    if brackets and tok.line > brackets[-1].line and (
            _first_on_line(tok, text_lines) or _STMT_START.match(text_lines[tok.line - 1])):
        b = brackets[-1]
        return SyntaxIssue(f"'{b.value}' was never closed", b.line, b.column, b.line,
                           b.column + 1)
    if tok.type == "_NEWLINE":
        if prev is not None and prev.type in ("ADD_OP", "MUL_OP", "SHIFT_OP", "COMP_OP", "AUGOP",
                                               "EQUAL", "COMMA", "DOT") or (
                prev is not None and prev.value in ("=", "and", "or", "not", "**", "|", "&", "^")):
            return SyntaxIssue(f"expected an expression after {prev.value!r}", prev.line,
                               prev.column, prev.end_line, prev.end_column)
        expected = getattr(e, "expected", None) or set()
        if prev is not None and "COLON" in expected:
            return SyntaxIssue("expected ':'", prev.line, prev.column, prev.end_line,
                               prev.end_column)
        if prev is not None:
            return SyntaxIssue("invalid syntax: unexpected end of line", prev.line, prev.column,
                               prev.end_line, prev.end_column)
    if tok.type == "_INDENT":
        line = tok.end_line
        width = len(tok.value)
        return SyntaxIssue("unexpected indent", line, 1, line, width + 1)
    if tok.type == "_DEDENT":
        line = tok.end_line or tok.line
        return SyntaxIssue("unexpected dedent", line, 1, line, 2)
    end_line = tok.end_line or tok.line
    end_col = tok.end_column or tok.column + 1
    expected = getattr(e, "expected", None) or set()
    if "COLON" in expected and len(expected) <= 3:
        return SyntaxIssue(f"expected ':' before {_describe_token(tok)}", tok.line, tok.column,
                           end_line, end_col)
    return SyntaxIssue(f"invalid syntax: unexpected {_describe_token(tok)}", tok.line, tok.column,
                       end_line, end_col)


_STMT_START = re.compile(r"\s*(@|(for|with|if|elif|else|while|return|pass|def|class|assert)\b"
                         r"|[\w.\[\], ]+\s*=[^=])")


def _prev_token(state):
    return getattr(state, "prev", None) if state else None


def _first_on_line(tok, lines) -> bool:
    if not (0 < tok.line <= len(lines)):
        return False
    line = lines[tok.line - 1]
    return len(line) - len(line.lstrip()) + 1 == tok.column


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _is_header(lines, i) -> bool:
    """Whether line i (0-based) opens a block: its next code line is indented deeper."""
    ind = len(_indent_of(lines[i]).expandtabs(8))
    for j in range(i + 1, len(lines)):
        s = lines[j].strip()
        if s and not s.startswith("#"):
            return len(_indent_of(lines[j]).expandtabs(8)) > ind
    return False


def _enclosing_indent(lines, i) -> str:
    """The indentation of the nearest code line above line i that is not deeper than it:
    a badly dedented line is re-read at a level that exists."""
    width = len(_indent_of(lines[i]).expandtabs(8))
    for j in range(i - 1, -1, -1):
        s = lines[j].strip()
        if s and not s.startswith("#"):
            ind = _indent_of(lines[j])
            if len(ind.expandtabs(8)) <= width:
                return ind
    return ""


def parse_chunk(text: str, compiled: bool | None = None) -> ChunkParse:
    """Parse a kernel chunk (dedented, ending in a newline); never raises.  `compiled`: as
    for `get_parser` (both parsers give the same result)."""
    parser = get_parser(compiled)
    lines = text.split("\n")
    errors: list[SyntaxIssue] = []
    errored: set[int] = set()
    patched: set[int] = set()
    comments = []
    for _ in range(MAX_ERRORS + 5):
        try:
            module = parser.parse("\n".join(lines))
            state = _indenter.state
            comments = state.comments if state else []
            return ChunkParse(module, errors, comments)
        except (UnexpectedInput, IndentationError_) as e:
            state = _indenter.state
            if state is not None and not comments:
                comments = list(state.comments)
            issue = _error_issue(e, state, lines)
            # an error on a line we replaced is an artifact of recovery, not the user's
            if issue.line not in errored and issue.line not in patched and \
                    len(errors) < MAX_ERRORS:
                errors.append(issue)
                errored.add(issue.line)
            tok = getattr(e, "token", None)
            err_line = getattr(e, "line", None) or (tok.line if tok is not None else None) \
                or issue.line
            if isinstance(err_line, int) and err_line < 1:
                err_line = issue.line
            first = err_line
            if state is not None and state.brackets:
                first = min(first, state.brackets[0].line)
            first = min(first, issue.line)
            if tok is not None and tok.type == "_NEWLINE" and tok.line < err_line:
                first = min(first, tok.line)
            if all(k in patched for k in range(first, err_line + 1)):
                # no progress on this line: widen to the previous code line
                k = first - 1
                while k >= 1 and (not lines[k - 1].strip() or k in patched):
                    k -= 1
                if k < 1:
                    return ChunkParse(None, errors, comments)
                first = k
            if not (1 <= first <= len(lines)):
                return ChunkParse(None, errors, comments)
            last = max(first, min(err_line, len(lines)))
            header = _is_header(lines, last - 1)
            ind = _indent_of(lines[first - 1])
            if isinstance(e, IndentationError_):
                ind = _enclosing_indent(lines, first - 1)
            lines[first - 1] = ind + ("if 0:" if header else "pass")
            patched.add(first)
            for k in range(first + 1, last + 1):
                lines[k - 1] = ""
                patched.add(k)
    return ChunkParse(None, errors, comments)
