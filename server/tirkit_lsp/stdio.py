"""The server's input stream: JSON-RPC bodies that are not valid UTF-8 are read anyway.

LSP content is UTF-8 JSON, but a client can send a document whose bytes it never decoded
(a file that is not UTF-8).  pygls would fail to decode such a body and drop the whole
message (and tell the user "Error in server").  Here each byte that is not UTF-8 becomes the
JSON escape of the surrogate Python's `surrogateescape` maps it to (`\\udc80` ... `\\udcff`):
the body is then valid UTF-8 JSON, the message arrives, and the document's text holds the
bad bytes as lone surrogates, which the core reads as replacement characters with one
`syntax` diagnostic at the first (`tirkit.script.parse.decode`).
"""
from __future__ import annotations


def lenient_body(body: bytes) -> bytes:
    """`body` itself when it is UTF-8; else the same JSON with each bad byte escaped."""
    try:
        body.decode("utf-8")
        return body
    except UnicodeDecodeError:
        return body.decode("utf-8", "surrogateescape").encode("utf-8", "backslashreplace")


class LenientStdin:
    """A binary input stream (what pygls reads with `readline` and `read(n)`) whose message
    bodies are made valid UTF-8 by `lenient_body`; header lines pass unchanged."""

    def __init__(self, stream):
        self.stream = stream

    def readline(self) -> bytes:
        return self.stream.readline()

    def read(self, n: int = -1) -> bytes:
        return lenient_body(self.stream.read(n))
