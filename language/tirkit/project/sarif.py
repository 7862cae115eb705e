"""SARIF 2.1.0 (the OASIS Static Analysis Results Interchange Format) for code-scanning
dashboards: one run whose driver lists every documented code as a rule (help text from
docs/diagnostics.md and its pages) and each reported code; one result per diagnostic with
its region and related locations.  Columns count Unicode code points (`columnKind`)."""
from __future__ import annotations

import os
import pathlib
import urllib.parse

from .help import help_for, help_texts

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
BASE = "%SRCROOT%"


def _uri(path: str, root: str):
    """(uri, uriBaseId or None): relative to `root` when inside it, else a file URI."""
    ap = os.path.abspath(path)
    rel = os.path.relpath(ap, root)
    if not rel.startswith(".."):
        return urllib.parse.quote(rel.replace(os.sep, "/")), BASE
    return pathlib.Path(ap).as_uri(), None


def _location(path, span, root, message=None, ident=None) -> dict:
    uri, base = _uri(path, root)
    art = {"uri": uri}
    if base:
        art["uriBaseId"] = base
    region = {"startLine": span.line, "startColumn": span.column,
              "endLine": max(span.end_line, span.line),
              "endColumn": max(span.end_column, 1)}
    if region["endLine"] == region["startLine"] and region["endColumn"] < span.column:
        region["endColumn"] = span.column
    loc = {"physicalLocation": {"artifactLocation": art, "region": region}}
    if ident is not None:
        loc["id"] = ident
    if message:
        loc["message"] = {"text": message}
    return loc


def _rule(code: str) -> dict:
    h = help_for(code)
    rule = {"id": code, "name": code.replace("/", "-")}
    if h is None:
        rule["shortDescription"] = {"text": code}
        return rule
    text, md, page = h
    first = text.split(". ")[0].rstrip(".") + "."
    rule["shortDescription"] = {"text": first}
    rule["fullDescription"] = {"text": text}
    rule["help"] = {"text": f"{text} (docs/{page})", "markdown": f"{md}\n\nSee docs/{page}."}
    return rule


def sarif_log(results, root=None, version=None) -> dict:
    """`results`: [(path, [Diagnostic])]; `root`: the folder relative paths start from."""
    if version is None:
        from .. import __version__ as version
    root = os.path.abspath(root or os.getcwd())
    reported = sorted({d.code for _, diags in results for d in diags})
    codes = sorted(set(help_texts()) | set(reported))
    index = {c: i for i, c in enumerate(codes)}
    out = []
    for path, diags in results:
        for d in diags:
            res = {"ruleId": d.code, "ruleIndex": index[d.code],
                   "level": LEVELS.get(d.severity, "note"),
                   "message": {"text": d.message},
                   "locations": [_location(path, d.span, root)]}
            related = [(rs, m) for rs, m in d.related if rs is not None]
            if related:
                res["relatedLocations"] = [
                    _location(rs.file or path, rs, root, m or "related", i)
                    for i, (rs, m) in enumerate(related)]
            out.append(res)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "tirkit",
                "version": str(version),
                "rules": [_rule(c) for c in codes],
            }},
            "originalUriBaseIds": {BASE: {"uri": pathlib.Path(root).as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": out,
        }],
    }
