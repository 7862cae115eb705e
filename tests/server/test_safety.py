"""A feature that raises is logged and answers its empty value; the others keep working."""
from __future__ import annotations

import asyncio
import logging

from lsprotocol import types as T

from tirkit_lsp.features import FEATURES
from tirkit_lsp.server import create_server


def test_failing_feature_answers_empty(caplog):
    server = create_server()
    assert server.features == list(FEATURES)        # every feature module set itself up

    @server.safe_feature(T.TEXT_DOCUMENT_TYPE_DEFINITION, default=list)
    async def broken(params):
        raise ZeroDivisionError("a bug in a feature")

    handler = server.protocol.fm.features[T.TEXT_DOCUMENT_TYPE_DEFINITION]
    params = T.TypeDefinitionParams(T.TextDocumentIdentifier("file:///x.py"), T.Position(0, 0))
    with caplog.at_level(logging.ERROR, logger="tirkit_lsp"):
        assert asyncio.run(handler(params)) == []
    assert any("a bug in a feature" in r.getMessage() for r in caplog.records)
