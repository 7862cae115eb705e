"""Formatting with the canonical printer (`tirkit.script.format`): kernels only, the rest of
the file untouched, and only the lines that changed are sent (so undo, cursor and folding
stay where they were).  A kernel with errors is left alone.

Constants follow `tirkit.constants.inlineThreshold`, as `tirkit fmt --inline-threshold` does:
a `T.allocate_const` tensor with more elements is written to the script's `.params` file
(the one its `params.load(...)` names, else `<script>.params` beside it) before the edits are
returned, so the text never names data that is not on disk.  A document that is not a file,
or a `.params` file that cannot be written, keeps its constants inline."""
from __future__ import annotations

import difflib

from lsprotocol import types as T

from tirkit.script.format import format_text
from tirkit.script.params_print import sink_for_script


def line_edits(conv, old_lines: list, new_lines: list) -> list:
    """Minimal whole-line TextEdits turning old_lines into new_lines (both from split('\\n'))."""
    n = len(old_lines)
    edits = []
    sm = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        new = new_lines[j1:j2]
        if i2 < n:          # the replaced lines each end in a newline
            rng = T.Range(T.Position(i1, 0), T.Position(i2, 0))
            text = "".join(x + "\n" for x in new)
        elif i1 > 0:        # reaches the end of the file: join onto the line before
            prev = i1 - 1
            rng = T.Range(T.Position(prev, conv.to_client_char(prev, len(old_lines[prev]))),
                          T.Position(n - 1, conv.to_client_char(n - 1, len(old_lines[n - 1]))))
            text = "".join("\n" + x for x in new)
        else:
            rng = T.Range(T.Position(0, 0),
                          T.Position(n - 1, conv.to_client_char(n - 1, len(old_lines[n - 1]))))
            text = "\n".join(new)
        edits.append(T.TextEdit(range=rng, new_text=text))
    return edits


def format_edits(server, a) -> list:
    if not a.has_kernels:
        return []
    new_text = None
    if a.path:
        from .configuration import project_config
        threshold = project_config(server, a.path).inline_threshold
        sink = sink_for_script(a.text, a.path, threshold)
        candidate, _skipped = format_text(a.text, a.path, params=sink)
        try:
            sink.commit()
            new_text = candidate
        except OSError as e:
            server.log_error(f"writing {sink.path}", e)
    if new_text is None:
        new_text, _skipped = format_text(a.text, a.path)
    if new_text == a.text:
        return []
    return line_edits(server.converter(a), a.text.split("\n"), new_text.split("\n"))


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_FORMATTING, default=list)
    async def formatting(params: T.DocumentFormattingParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return []
        return await server.run_sync(format_edits, server, a, title="tirkit: formatting")
