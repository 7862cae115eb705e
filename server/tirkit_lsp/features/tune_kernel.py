"""`tirkit.tuneKernel` (workspace/executeCommand): "Tune this kernel".

Arguments: the document URI, the function's name, and optionally `{"trials": N}` (default:
the `tirkit.tune.trials` setting, 32).  The search (`tirkit.tune`) runs off the event loop,
its candidates measured in a separate process; it reports work-done progress (trials done,
best time, GFLOP/s) and stops when the client cancels the progress or the request.  When it
completes it applies the best schedule as one `workspace/applyEdit` (the lines that changed)
and answers `{"applied", "best_ms", "gflops", "trials", "invalid", "summary"}`; a cancelled
search answers `{"cancelled": true, ...}` and edits nothing, as does a document that changed
while the search ran.

The code lens "Tune this kernel" (on each kernel when the `tirkit.tune.codeLens` setting is
on) sends this command; `tune_lenses` makes them and the code lens feature shows them.
"""
from __future__ import annotations

import asyncio
import threading
import uuid

from lsprotocol import types as T

from .formatting import line_edits

COMMAND = "tirkit.tuneKernel"


def tune_lenses(server, a) -> list:
    """One "Tune this kernel" lens per tunable function (when the setting is on): not on
    one that holds errors, whose IR may be partial and could not be written back."""
    if not server.settings.tune_lens or not a.has_kernels:
        return []
    conv = server.converter(a)
    out = []
    for f in a.functions():
        if f.span is None or a.result.has_errors(f):
            continue
        span = f.header_span or f.span
        out.append(T.CodeLens(range=conv.range(span), command=T.Command(
            title="Tune this kernel", command=COMMAND, arguments=[a.uri, f.name])))
    return out


def _search(a, name, trials, report, cancelled):
    """The tuned file text and the result (runs on a worker thread)."""
    from tirkit.tune import TuneError, tune
    from tirkit.tune.edit import EditError, tuned_text
    from tirkit.tune.runners import LocalRunner
    runner = LocalRunner(1)
    try:
        result = tune(a.result.module, name, trials, runner=runner, progress=report,
                      cancelled=cancelled)
    except TuneError as e:
        return None, str(e)
    finally:
        runner.close()
    if result.cancelled or result.best is None:
        return None, result
    try:
        return tuned_text(a.result, name, result.module), result
    except EditError as e:
        return None, str(e)


def _summary(result) -> dict:
    best = result.best_seconds
    return {"best_ms": best * 1e3 if best else None,
            "gflops": result.flops / best / 1e9 if best and result.flops else None,
            "trials": len(result.records), "invalid": result.stats.invalid,
            "summary": result.stats.line()}


def setup(server) -> None:
    @server.command(COMMAND)
    async def run(*args):
        try:
            return await _tune(server, args)
        except asyncio.CancelledError:
            raise
        except Exception as e:          # a failing command answers a message
            server.log_error(COMMAND, e)
            return {"message": f"could not tune the kernel: {type(e).__name__}"}


def _trials(server, args) -> int:
    opts = args[2] if len(args) > 2 and isinstance(args[2], dict) else {}
    n = opts.get("trials", server.settings.tune_trials)
    return n if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= 100_000 \
        else server.settings.tune_trials


async def _tune(server, args):
    if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], str):
        return {"message": f"{COMMAND} wants a document URI and a function name"}
    uri, name = args[0], args[1]
    a = await server.analysis(uri)
    if a is None:
        return {"message": "the document is not open"}
    func = next((f for f in a.functions() if f.name == name), None)
    if func is None:
        return {"message": f"no kernel named '{name}' in this file"}
    if a.result.has_errors(func):
        return {"message": f"'{name}' has errors: fix them before tuning it"}
    trials = _trials(server, args)
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    token = f"tirkit-tune-{uuid.uuid4().hex[:12]}"
    progress = server.work_done_progress
    try:
        await asyncio.wait_for(progress.create_async(token), 5.0)
        progress.begin(token, T.WorkDoneProgressBegin(
            title=f"Tuning {name}", cancellable=True, message=f"0/{trials} trials",
            percentage=0))
        progress.tokens[token].add_done_callback(lambda _f: stop.set())
    except Exception as e:              # a client without progress: tune all the same
        server.log_error("work-done progress", e)
        token = None

    def report(done, total, best, gflops):
        msg = f"{done}/{total} trials, best {best * 1e3:.3f} ms" if best else \
            f"{done}/{total} trials"
        if gflops:
            msg += f", {gflops:.1f} GFLOP/s"
        if token is not None:
            loop.call_soon_threadsafe(progress.report, token, T.WorkDoneProgressReport(
                message=msg, percentage=min(100, int(100 * done / max(total, 1))),
                cancellable=True))

    fut = loop.run_in_executor(None, _search, a, name, trials, report, stop.is_set)
    try:
        new_text, result = await asyncio.shield(fut)
    except asyncio.CancelledError:      # the request was cancelled: stop the search
        stop.set()
        if token is not None:
            progress.end(token, T.WorkDoneProgressEnd(message="cancelled"))
        raise
    if isinstance(result, str):
        if token is not None:
            progress.end(token, T.WorkDoneProgressEnd(message=result))
        return {"message": result}
    answer = _summary(result)
    if new_text is None:
        if token is not None:
            progress.end(token, T.WorkDoneProgressEnd(message="cancelled"))
        return {"cancelled": True, "applied": False, **answer}
    applied = False
    if server.current_version(uri) == a.version:
        edits = line_edits(server.converter(a), a.text.split("\n"), new_text.split("\n"))
        res = await server.quietly(server.workspace_apply_edit_async(T.ApplyWorkspaceEditParams(
            edit=T.WorkspaceEdit(changes={uri: edits}), label=f"Tune {name}")), 30.0)
        applied = bool(res is not None and res.applied)
    if token is not None:
        progress.end(token, T.WorkDoneProgressEnd(
            message=f"best {answer['best_ms']:.3f} ms" + (" (applied)" if applied else "")))
    return {"applied": applied, **answer}
