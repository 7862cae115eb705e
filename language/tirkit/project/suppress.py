"""Suppression comments.

    x = A[i]  # tirkit: ignore[bounds/out-of-bounds]   that code on this line
    x = A[i]  # tirkit: ignore[bounds/, type/]         code families, comma-separated
    x = A[i]  # tirkit: ignore                         every code on this line
    # tirkit: ignore-file[thread/launch-limit]         that code in the whole file
    # tirkit: ignore-file                              every code in the whole file

A line suppression applies to the diagnostics that start on its line.  Only comments count
(a string that contains the words does not).  A suppression, or one code of its list, that
silences nothing is reported as `suppression/unused` (a warning) when asked for.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, Span
from . import codes

DIRECTIVE = re.compile(r"#\s*tirkit:\s*(ignore-file|ignore)(?![\w-])(?:\[([^\]]*)\])?")
UNUSED = "suppression/unused"


@dataclass
class Suppression:
    line: int                       # 1-based
    column: int                     # 1-based, the `#`
    end_column: int                 # exclusive
    whole_file: bool
    patterns: tuple                 # () for "every code"
    pattern_columns: tuple = ()     # (column, end_column) of each pattern
    used: set = field(default_factory=set)   # patterns (or "" for a bare one) that matched

    def covers(self, d: Diagnostic):
        """The pattern that silences `d` ("" for a bare suppression), or None."""
        if not self.whole_file and d.span.line != self.line:
            return None
        if not self.patterns:
            return ""
        for p in self.patterns:
            if codes.matches(d.code, p):
                return p
        return None


def comments(text: str):
    """(line, column, comment text) of every comment; 1-based.  A file that does not
    tokenize to its end is read by lines after the point where tokenizing stopped."""
    out, last = [], 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.start[1] + 1, tok.string))
            last = tok.end[0]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        for i, line in enumerate(text.split("\n")[last:], start=last + 1):
            j = line.find("#")
            if j >= 0:
                out.append((i, j + 1, line[j:]))
    return out


def find(text: str) -> list:
    """Every suppression of the text, in order."""
    if "tirkit:" not in text:
        return []
    out = []
    for line, col, comment in comments(text):
        for m in DIRECTIVE.finditer(comment):
            pats, cols = [], []
            if m.group(2) is not None:
                start = m.start(2)
                for part in re.finditer(r"[^,\s]+", m.group(2)):
                    pats.append(part.group())
                    c = col + start + part.start()
                    cols.append((c, c + len(part.group())))
            out.append(Suppression(line, col + m.start(), col + m.end(),
                                   m.group(1) == "ignore-file", tuple(pats), tuple(cols)))
    return out


def apply(diagnostics, suppressions) -> list:
    """The diagnostics no suppression silences; each suppression records what it used."""
    kept = []
    for d in diagnostics:
        hit = False
        for s in suppressions:
            p = s.covers(d)
            if p is not None:
                s.used.add(p)
                hit = True
        if not hit:
            kept.append(d)
    return kept


def unused(suppressions) -> list:
    """`suppression/unused` warnings: suppressions, or codes of their lists, that silenced
    nothing (after `apply`)."""
    out = []
    for s in suppressions:
        kind = "ignore-file" if s.whole_file else "ignore"
        if not s.patterns:
            if "" not in s.used:
                out.append(Diagnostic(UNUSED, "warning", f"unused suppression: nothing is "
                                      f"reported {'in this file' if s.whole_file else 'on this line'}",
                                      Span(s.line, s.column, s.line, s.end_column)))
            continue
        for p, (c0, c1) in zip(s.patterns, s.pattern_columns):
            if p in s.used:
                continue
            bad = "" if codes.valid(p) else " (not a code or a code family)"
            out.append(Diagnostic(UNUSED, "warning", f"unused suppression: `{p}` is not "
                                  f"reported {'in this file' if s.whole_file else 'on this line'}"
                                  f"{bad}; remove it from `# tirkit: {kind}[...]`",
                                  Span(s.line, c0, s.line, c1)))
    return out


def add_ignore(line: str, code: str) -> str:
    """The line with `code` added to its `# tirkit: ignore[...]`, or such a comment appended
    (what the editor's quick fix "Ignore CODE on this line" writes)."""
    body = line.rstrip("\r\n")
    tail = line[len(body):]
    for m in DIRECTIVE.finditer(body):
        if m.group(1) != "ignore":
            continue
        if m.group(2) is None:
            return line                     # a bare ignore already silences every code
        pats = [p for p in re.findall(r"[^,\s]+", m.group(2))]
        if code not in pats:
            pats.append(code)
        return body[:m.start(2)] + ", ".join(pats) + body[m.end(2):] + tail
    return body.rstrip() + f"  # tirkit: ignore[{code}]" + tail


def remove_unused(line: str, column: int, end_column: int) -> str:
    """The line without the suppression pattern at 1-based [column, end_column) (what a
    `suppression/unused` diagnostic spans): the pattern leaves its list, and a directive
    left with nothing to silence leaves the line (the quick fix "Remove unused
    suppression")."""
    body = line.rstrip("\r\n")
    tail = line[len(body):]
    for m in DIRECTIVE.finditer(body):
        if not m.start() <= column - 1 < m.end():
            continue
        pats = list(re.finditer(r"[^,\s]+", m.group(2) or ""))
        keep = [p.group() for p in pats if m.start(2) + p.start() != column - 1]
        if m.group(2) is not None and keep and len(keep) < len(pats):
            return body[:m.start(2)] + ", ".join(keep) + body[m.end(2):] + tail
        return (body[:m.start()].rstrip() + body[m.end():]).rstrip() + tail
    return line
