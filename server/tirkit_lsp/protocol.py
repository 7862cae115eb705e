"""pygls's language-server protocol with content changes applied through a line index.

pygls applies an incremental change by splitting the document into lines and writing every
line back, in Python: 50 ms on a 116,000-line file for a one-character edit.  Here each
change is located through `lines.Lines` (one vectorised pass) and applied with one string
copy; the workspace then receives the new text as a whole-document change (its public
`update_text_document`, which also records the version).  A document the workspace does not
hold is left to pygls's own handling.
"""
from __future__ import annotations

from lsprotocol import types as T
from pygls.protocol import LanguageServerProtocol, lsp_method

from tirkit.lru import LRU

from .convert import Converter
from .lines import Lines, apply_change


def changed_lines(lines: Lines, changes, encoding: str) -> Lines:
    """The lines of the text after the content changes of one didChange, in order."""
    for change in changes:
        if not isinstance(change, T.TextDocumentContentChangePartial):
            lines = Lines(change.text)
            continue
        conv = Converter(lines, encoding)
        s, e = change.range.start, change.range.end
        lines = apply_change(lines, (s.line, conv.from_client_char(s.line, s.character)),
                             (e.line, conv.from_client_char(e.line, e.character)), change.text)
    return lines


def changed_text(text: str, changes, encoding: str) -> str:
    """`text` after the content changes of one didChange, in order."""
    return changed_lines(Lines(text), changes, encoding).text


class TirkitProtocol(LanguageServerProtocol):

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lines = LRU(64)          # uri -> the Lines of its newest text

    def known_lines(self, uri: str, text: str) -> Lines | None:
        """The line index of `text` if it is the newest text of `uri` (else None)."""
        lines = self._lines.get(uri)
        return lines if lines is not None and lines.text is text else None

    @lsp_method(T.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: T.DidChangeTextDocumentParams):
        uri = params.text_document.uri
        docs = self.workspace.text_documents
        doc = docs.get(uri)
        if doc is None:
            from urllib.parse import unquote
            doc = docs.get(unquote(uri))
        if doc is None:
            yield from super().lsp_text_document__did_change(params)
            return
        enc = self.workspace.position_encoding
        text = doc.source
        lines = self.known_lines(uri, text) or Lines(text)
        lines = changed_lines(lines, params.content_changes,
                              str(getattr(enc, "value", enc) or "utf-16"))
        self._lines.put(uri, lines)
        self.workspace.update_text_document(
            params.text_document, T.TextDocumentContentChangeWholeDocument(text=lines.text))
        handler = self.fm.features.get(T.TEXT_DOCUMENT_DID_CHANGE)
        if handler is not None:
            yield handler, (params,), None
