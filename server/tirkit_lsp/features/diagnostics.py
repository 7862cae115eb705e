"""Diagnostics: pushed on open and (debounced) on change with the fast rule set, the full
set on save (or on every change with `tirkit.diagnostics.mode = "onChange"`), and pulled
through `textDocument/diagnostic` by clients that ask.  A file without kernels gets none.

A client that pulls diagnostics is not also sent pushed ones (it would see each twice),
unless `tirkit.diagnostics.push` is "always"; one that cannot be asked to pull again is
pushed only what a save adds (saved_diagnostics.py).
"""
from __future__ import annotations

import asyncio

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException

from . import saved_diagnostics
from .suppressions import config_key, visible_diagnostics


def _pending(server) -> dict:
    """uri -> the asyncio.Task of the push (or warm-up) scheduled for that document."""
    return server.diagnostic_tasks


def wants_full(server, a) -> bool:
    return server.settings.diagnostics_mode == "onChange" or \
        server.saved_versions.get(a.uri) == a.version


def lsp_diagnostics(server, a, full: bool) -> list:
    conv = server.converter(a)
    return [conv.diagnostic(d, a.uri, a.path)
            for d in visible_diagnostics(server, a, full, server.requests_first.pause)]


def client_pulls(server) -> bool:
    return server.client_supports("text_document", "diagnostic")


def pushing(server) -> bool:
    return server.settings.push == "always" or not client_pulls(server)


async def publish(server, uri: str, full: bool, delay: float = 0.0) -> None:
    if delay:
        await asyncio.sleep(delay)
    a = await server.analysis(uri)
    if a is None:
        return
    full = full or wants_full(server, a)
    items = await server.run_sync(lsp_diagnostics, server, a, full, rules=True)
    if not server.is_current(a):          # the document moved on: drop this result
        return
    server.text_document_publish_diagnostics(
        T.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=a.version))


def schedule(server, uri: str, full: bool, delay: float) -> None:
    replace_task(server, uri, lambda: publish(server, uri, full, delay))


def replace_task(server, uri: str, work) -> None:
    """Run `work()` (a coroutine) as the one diagnostics task of `uri`, cancelling the one
    scheduled before; an error is logged, never raised."""
    pending = _pending(server)
    old = pending.pop(uri, None)
    if old is not None and not old.done():
        old.cancel()

    async def run():
        try:
            await work()
        except asyncio.CancelledError:
            pass
        except Exception as e:
            server.log_error("diagnostics", e)
        finally:
            if pending.get(uri) is task:
                del pending[uri]

    task = asyncio.ensure_future(run())
    pending[uri] = task


def warm(server, uri: str, delay: float) -> None:
    """For clients that pull: analyse the new version now, so the pull finds it ready."""
    pending = _pending(server)
    old = pending.pop(uri, None)
    if old is not None and not old.done():
        old.cancel()

    async def run():
        try:
            await asyncio.sleep(delay)
            a = await server.analysis(uri)
            if a is not None and server.is_current(a):
                from .suppressions import visible_diagnostics
                await server.run_sync(visible_diagnostics, server, a, wants_full(server, a),
                                      server.requests_first.pause, rules=True)
        except asyncio.CancelledError:
            pass
        except Exception as e:
            server.log_error("diagnostics", e)

    pending[uri] = asyncio.ensure_future(run())


async def refresh_all(server) -> None:
    if pushing(server):
        for uri in list(server.workspace.text_documents):
            schedule(server, uri, False, 0.0)
    elif server.client_supports("workspace", "diagnostics", "refresh_support"):
        await server.quietly(server.workspace_diagnostic_refresh_async(None))
    else:
        saved_diagnostics.refresh(server)


def setup(server) -> None:
    @server.safe_feature(T.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(params: T.DidOpenTextDocumentParams):
        if pushing(server):
            schedule(server, params.text_document.uri, False, 0.0)

    @server.safe_feature(T.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(params: T.DidChangeTextDocumentParams):
        uri = params.text_document.uri
        for listener in server.change_listeners:
            try:
                listener(uri)
            except Exception as e:
                server.log_error("didChange listener", e)
        if pushing(server):
            schedule(server, uri, False, server.settings.debounce_ms / 1000.0)
        else:
            saved_diagnostics.clear(server, uri)
            warm(server, uri, server.settings.debounce_ms / 1000.0)

    @server.safe_feature(T.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(params: T.DidSaveTextDocumentParams):
        uri = params.text_document.uri
        server.saved_versions[uri] = server.current_version(uri)
        if pushing(server):
            schedule(server, uri, True, 0.0)
        elif server.client_supports("workspace", "diagnostics", "refresh_support"):
            await server.quietly(server.workspace_diagnostic_refresh_async(None))
        else:                       # it will not pull again: push what the save added
            saved_diagnostics.schedule(server, uri)

    @server.safe_feature(T.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(params: T.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        task = _pending(server).pop(uri, None)
        if task is not None:
            task.cancel()
        server.forget(uri)
        saved_diagnostics.clear(server, uri)
        if pushing(server):
            server.text_document_publish_diagnostics(
                T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def empty_report():
        return T.RelatedFullDocumentDiagnosticReport(items=[])

    @server.safe_feature(T.TEXT_DOCUMENT_DIAGNOSTIC,
                         T.DiagnosticOptions(identifier="tirkit", inter_file_dependencies=False,
                                             workspace_diagnostics=False),
                         default=empty_report)
    async def pull(params: T.DocumentDiagnosticParams):
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return empty_report()
        full = saved_diagnostics.pull_is_full(server, wants_full(server, a))
        result_id = f"{a.version}:{'full' if full else 'fast'}:{config_key(server, a)}" \
            f":{server.settings.target or ''}"
        if params.previous_result_id == result_id:
            return T.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        items = await server.run_sync(lsp_diagnostics, server, a, full, rules=True)
        if not server.is_current(a):
            # the document moved on while we worked: ask the client to pull again
            raise JsonRpcException(message="the document changed", code=-32802,
                                   data={"retriggerRequest": True})
        return T.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)
