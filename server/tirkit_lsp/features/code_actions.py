"""Schedule primitives as code actions: at a loop (split, fuse, reorder, parallel, vectorize,
unroll, bind in GPU kernels, decompose_reduction, rfactor, blockize) and at a block
(compute_at, reverse_compute_at, inlining, cache_read/cache_write, decompose_reduction).
The core decides what applies (`tirkit.schedule.actions`): an action is offered only when
its primitive succeeds on the current IR. Applying one replaces the kernel's text by the
printed result, sent as the lines that changed.

With a cost model (`tirkit.cost.predict`), each schedule action's title carries the predicted
speed-up of the kernel it produces ("Parallelize loop 'i' — predicted 2.3x faster") and the
actions come fastest first.

Quick fix: a loop that feeds a reduction while parallel, vectorized or bound to
blockIdx/vthread (`loop-nest/reduction-on-parallel`) is made serial; a block that an
intrinsic can serve (`tensorize/available`, and at any such block) is tensorized; a spatial
iterator a block accumulates over (`signature/iter-type`) is declared a reduction, and an
accumulator without an init gets one (`dataflow/uncovered-read`), a parallel or vectorized
loop whose iterations depend on each other is made serial (`loop-nest/parallel-race`,
`loop-nest/vector-dependence`), and an allocation nothing touches is removed
(`dataflow/unused-buffer`; features/text_fixes.py).

Commands: `tirkit.recordSchedule` (sent with each action, after its edit) keeps the Python
of the applied primitive; `tirkit.showTrace` answers the Python accumulated for a document.
"""
from __future__ import annotations

import dataclasses
import json
import threading

from lsprotocol import types as T

from tirkit.cost.predict import ranked_actions
from tirkit.diagnostics import Diagnostic, Span
from tirkit.schedule.actions import QUICK_FIXES, Action, actions_at, apply_action, quick_fixes
from tirkit.schedule.errors import ScheduleError

from . import asymptotic, text_fixes
from .configuration import document_intrinsics
from .formatting import line_edits

RECORD = "tirkit.recordSchedule"
SHOW = "tirkit.showTrace"


def list_actions(server, a, rng: T.Range) -> list:
    if not a.has_kernels:
        return []
    conv = server.converter(a)
    line, col = conv.line_col(rng.start)
    return ranked_actions(a.result.module, actions_at(
        a.result, line, col, intrinsics=list(document_intrinsics(server, a)) or None))


def list_quick_fixes(server, a, diagnostics) -> list:
    """[(Action, LSP diagnostic)] for the diagnostics of the request that have a fix."""
    if not a.has_kernels:
        return []
    conv = server.converter(a)
    out = []
    for d in diagnostics or []:
        if d.code not in QUICK_FIXES:
            continue
        related = []
        for ri in d.related_information or []:
            r = ri.location.range
            line, col = conv.line_col(r.start)
            end_line, end_col = conv.line_col(r.end)
            related.append((Span(line, col, end_line, end_col), ri.message))
        line, col = conv.line_col(d.range.start)
        core = Diagnostic(str(d.code), "error", d.message, Span(line, col, line, col + 1),
                          related)
        out.extend((act, d) for act in quick_fixes(
            a.result, core, intrinsics=list(document_intrinsics(server, a)) or None))
    return out


def resolved(server, a, action: Action, ca: T.CodeAction) -> T.CodeAction:
    """The code action with its edit (the changed lines of the file) and its record command."""
    try:
        new_text, python = apply_action(a.result, action)
    except ScheduleError:
        return ca
    edits = line_edits(server.converter(a), a.text.split("\n"), new_text.split("\n"))
    ca.edit = T.WorkspaceEdit(changes={a.uri: edits})
    ca.command = T.Command(title="record schedule step", command=RECORD,
                           arguments=[a.uri, python])
    # the step is recorded when the edit arrives as this text (`edit_arrived`), or by the
    # command, whichever comes first: a client may apply the edit and drop the command
    with server.records_lock:
        server.pending_records[a.uri] = (new_text, python)
    return ca


def edit_arrived(server, uri) -> None:
    """After a didChange: a resolved action whose edit gave the document's text now is
    recorded in the document's schedule trace."""
    with server.records_lock:
        pending = server.pending_records.get(uri)
        if pending is None:
            return
        snap = server.snapshot(uri)
        if snap is None or snap[1] != pending[0]:
            return
        del server.pending_records[uri]
        server.schedule_traces.setdefault(uri, []).append(pending[1])
        server.recorded_by_edit[uri] = pending[1]


def _rewrite(action: Action) -> str:
    """What an action does (its function and primitive calls), whatever its title says."""
    d = action.to_json()
    return json.dumps([d["func"], d["calls"]], sort_keys=True, default=str)


def _code_action(a, action: Action) -> T.CodeAction:
    kind = T.CodeActionKind.QuickFix if action.kind == "quickfix" else \
        T.CodeActionKind.RefactorRewrite
    return T.CodeAction(title=action.title, kind=kind,
                        data={"uri": a.uri, "version": a.version, "action": action.to_json()})


def setup(server) -> None:
    server.schedule_traces = {}          # uri -> [python text of each applied action]
    server.pending_records = {}          # uri -> (text after the resolved action, python)
    server.recorded_by_edit = {}         # uri -> python recorded on the edit's arrival
    server.records_lock = threading.Lock()
    server.change_listeners.append(lambda uri: edit_arrived(server, uri))

    @server.safe_feature(T.TEXT_DOCUMENT_CODE_ACTION,
                         T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix,
                                                                T.CodeActionKind.RefactorRewrite],
                                             resolve_provider=True), default=list)
    async def code_action(params: T.CodeActionParams):
        only = [str(getattr(k, "value", k)) for k in params.context.only or []]

        def wanted(kind):
            return not only or any(kind == k or kind.startswith(k + ".") or k == ""
                                   for k in only)
        a = await server.analysis(params.text_document.uri)
        if a is None:
            return []
        actions, fixes = [], []
        if wanted("quickfix"):
            fixes = await server.run_sync(list_quick_fixes, server, a,
                                          params.context.diagnostics, title="tirkit: fixes")
        if wanted("refactor.rewrite"):
            actions = await server.run_sync(list_actions, server, a, params.range,
                                            title="tirkit: schedule actions")
        direct, out, ignores = [], [], []   # direct: fixes that carry their edit
        if wanted("quickfix"):
            from .suppressions import ignore_fixes
            ignores = await server.run_sync(ignore_fixes, server, a,
                                            params.context.diagnostics, title="tirkit: fixes")
            direct = await server.run_sync(asymptotic.quick_fixes, server, a,
                                           params.context.diagnostics, title="tirkit: fixes")
            direct += await server.run_sync(text_fixes.quick_fixes, server, a,
                                            params.context.diagnostics, title="tirkit: fixes")
        # a fix is not offered twice: the same rewrite listed at the block is dropped, and the
        # fix takes that action's title (with the cost model's predicted speed-up)
        listed = {_rewrite(x): x for x in actions}
        fixes = [(dataclasses.replace(x, title=listed[_rewrite(x)].title)
                  if _rewrite(x) in listed else x, d) for x, d in fixes]
        for x, d in fixes:
            ca = _code_action(a, x)
            ca.kind = T.CodeActionKind.QuickFix
            ca.diagnostics = [d]
            ca.is_preferred = True
            out.append(ca)
        fixed = {_rewrite(x) for x, _ in fixes}
        actions = [x for x, _ in fixes] + [x for x in actions if _rewrite(x) not in fixed]
        out += [_code_action(a, x) for x in actions[len(fixes):]]
        lazy = server.client_supports("text_document", "code_action", "resolve_support")
        if not lazy:
            out = [await server.run_sync(resolved, server, a, x, ca)
                   for x, ca in zip(actions, out)]
        return direct + out[:len(fixes)] + ignores + out[len(fixes):]

    @server.safe_feature(T.CODE_ACTION_RESOLVE, default=None)
    async def code_action_resolve(ca: T.CodeAction):
        data = ca.data if isinstance(ca.data, dict) else {}
        uri = data.get("uri")
        if not uri or "action" not in data:
            return ca
        a = await server.analysis(uri)
        if a is None or a.version != data.get("version"):
            return ca                  # the document moved on: no edit for an old version
        action = Action.from_json(data["action"])
        return await server.run_sync(resolved, server, a, action, ca)

    @server.command(RECORD)
    def record(*args):
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        if len(args) == 2 and isinstance(args[1], str):
            uri, python = str(args[0]), args[1]
            with server.records_lock:
                if server.recorded_by_edit.get(uri) == python:   # the edit recorded it
                    del server.recorded_by_edit[uri]
                    return None
                pending = server.pending_records.get(uri)
                if pending is not None and pending[1] == python:
                    del server.pending_records[uri]
                server.schedule_traces.setdefault(uri, []).append(python)
        return None

    @server.command(SHOW)
    def show(*args):
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        uri = str(args[0]) if args else ""
        return "".join(server.schedule_traces.get(uri, []))
