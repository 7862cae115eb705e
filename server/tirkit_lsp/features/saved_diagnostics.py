"""On-save diagnostics for clients that pull but cannot be asked to pull again.

A client that pulls (`textDocument/diagnostic`) asks when a document opens or changes.  In
the `onSave` mode the full rule set applies to a saved version; a client with
`workspace.diagnostics.refreshSupport` is asked to pull again and receives it.  A client
without it (Neovim 0.11) never pulls after a save, and the specification gives the server
no way to make it; what it allows is the notification every client accepts,
`textDocument/publishDiagnostics`.  So for such a client the server pushes, after each save,
the diagnostics that only the full set has, and its pulls keep answering the on-change set.
Clients keep pushed and pulled diagnostics apart (Neovim in two namespaces, VS Code in two
collections), so none appears twice.  The next change ends the saved version: its pushed set
is cleared.
"""
from __future__ import annotations

from collections import Counter

from lsprotocol import types as T


def applies(server) -> bool:
    """The client pulls, cannot be asked to refresh, and nothing is pushed to it otherwise."""
    return (server.client_supports("text_document", "diagnostic")
            and not server.client_supports("workspace", "diagnostics", "refresh_support")
            and server.settings.push != "always")


def pull_is_full(server, full: bool) -> bool:
    """Whether a pull answers the full set: never for a client that gets the on-save part
    by push (it would see those diagnostics twice)."""
    return full and not (applies(server) and server.settings.diagnostics_mode == "onSave")


def _key(d: T.Diagnostic):
    r = d.range
    return (d.code, d.severity, d.message, r.start.line, r.start.character, r.end.line,
            r.end.character)


def on_save_only(full: list, fast: list) -> list:
    """The diagnostics of `full` that `fast` does not have (as many times as it lacks them)."""
    have = Counter(_key(d) for d in fast)
    out = []
    for d in full:
        k = _key(d)
        if have[k]:
            have[k] -= 1
        else:
            out.append(d)
    return out


def _extras(server, a) -> list:
    from .diagnostics import lsp_diagnostics
    if server.settings.diagnostics_mode != "onSave":
        return []
    return on_save_only(lsp_diagnostics(server, a, True), lsp_diagnostics(server, a, False))


async def publish(server, uri: str) -> None:
    """Push the on-save-only diagnostics of the saved version (an empty list clears)."""
    a = await server.analysis(uri)
    if a is None:
        return
    items = await server.run_sync(_extras, server, a, title="tirkit: checking", rules=True)
    if not server.is_current(a):          # the document moved on: this set is outdated
        return
    if items:
        server.pushed_on_save.add(uri)
    else:
        server.pushed_on_save.discard(uri)
    server.text_document_publish_diagnostics(
        T.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=a.version))


def schedule(server, uri: str) -> None:
    from .diagnostics import replace_task
    replace_task(server, uri, lambda: publish(server, uri))


def clear(server, uri: str) -> None:
    """The document changed (or closed): withdraw what was pushed for its saved version."""
    if uri in server.pushed_on_save:
        server.pushed_on_save.discard(uri)
        server.text_document_publish_diagnostics(
            T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def refresh(server) -> None:
    """Settings changed: push again for every saved document and every pushed set."""
    saved = {u for u, v in server.saved_versions.items() if server.current_version(u) == v}
    for uri in sorted(saved | server.pushed_on_save):
        schedule(server, uri)
