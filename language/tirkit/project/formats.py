"""The short report formats: GitHub Actions workflow commands (annotations on the pull
request's diff) and statistics (counts by code)."""
from __future__ import annotations

from collections import Counter

GITHUB_LEVELS = {"error": "error", "warning": "warning", "information": "notice",
                 "hint": "notice"}


def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def github_line(path: str, d) -> str:
    """`::error file=F,line=L,endLine=..,col=C,endColumn=..,title=CODE::message`."""
    s = d.span
    props = [f"file={_prop(path)}", f"line={s.line}", f"endLine={max(s.end_line, s.line)}",
             f"col={s.column}"]
    if s.end_line == s.line and s.end_column > s.column:
        props.append(f"endColumn={s.end_column}")
    props.append(f"title={_prop('tirkit ' + d.code)}")
    return f"::{GITHUB_LEVELS.get(d.severity, 'notice')} {','.join(props)}::" \
           f"{_data(d.message + ' [' + d.code + ']')}"


def statistics(results) -> list:
    """[(count, code, severity)], most frequent first."""
    c = Counter((d.code, d.severity) for _, diags in results for d in diags)
    return sorted(((n, code, sev) for (code, sev), n in c.items()),
                  key=lambda x: (-x[0], x[1], x[2]))


def statistics_text(rows) -> str:
    if not rows:
        return ""
    width = max(len(str(n)) for n, _, _ in rows)
    cw = max(len(code) for _, code, _ in rows)
    return "\n".join(f"{n:>{width}}  {code:<{cw}}  {sev}" for n, code, sev in rows)
