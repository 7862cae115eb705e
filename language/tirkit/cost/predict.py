"""What the editor shows from the cost model: predicted times of kernels and the predicted
speed-up of schedule actions.

    predict_kernels([func, ...])            # [seconds or None]: None for GPU kernels, for
                                            # kernels that call module functions, or when no
                                            # model is usable
    ranked_actions(module, actions)         # the actions retitled "... — predicted 2.3x faster"
                                            # and ordered fastest first

The model is the one `tirkit cost train` wrote for this machine, else the shipped one
(`CostModel.default`); `TIRKIT_COST_MODEL=off` turns predictions off. Every failure
(no usable model, a kernel the features cannot read) gives None: predictions are an extra, never
an error.
"""
from __future__ import annotations

import dataclasses
import logging
import os

log = logging.getLogger(__name__)


def editor_model():
    if os.environ.get("TIRKIT_COST_MODEL", "").lower() in ("off", "none", "0"):
        return None
    try:
        from .train import user_model
        return user_model()
    except Exception as e:                 # never an error for the user: no prediction
        log.warning("cost model unavailable: %s", e)
        return None


def cpu_kernel(func) -> bool:
    """Whether the kernel runs on the CPU (the model predicts CPU kernels only)."""
    from ..analysis.roofline import default_target
    return default_target(func) == "llvm"


def calls_functions(func) -> bool:
    """Whether the kernel calls functions of its module: the cost features read its own
    statements only, not the work done in what it calls, so the model does not predict it."""
    from ..ir.visit import function_calls
    return bool(function_calls(func.body))


def predict_kernels(funcs, model=None) -> list:
    model = model or editor_model()
    out = [None] * len(funcs)
    if model is None:
        return out
    from .features import extract
    rows, where = [], []
    for i, f in enumerate(funcs):
        if not cpu_kernel(f) or calls_functions(f):
            continue
        try:
            rows.append(extract(f))
            where.append(i)
        except Exception as e:             # a construct the features do not read
            log.warning("cost features of %s: %s", getattr(f, "name", "?"), e)
    if not rows:
        return out
    try:
        secs = model.predict_rows(rows)
    except Exception as e:
        log.warning("cost model prediction: %s", e)
        return out
    for i, s in zip(where, secs):
        out[i] = float(s)
    return out


def speedup_title(title: str, speedup: float) -> str:
    if speedup >= 1.0:
        return f"{title} — predicted {speedup:.1f}x faster"
    return f"{title} — predicted {1.0 / speedup:.1f}x slower"


def ranked_actions(module, actions, model=None) -> list:
    """Schedule actions (tirkit.schedule.actions.Action) with the predicted speed-up in their
    titles, fastest first; unchanged (same titles, same order) when there is no model."""
    if not actions:
        return list(actions)
    model = model or editor_model()
    if model is None:
        return list(actions)
    from ..schedule.actions import run
    from ..schedule.errors import ScheduleError
    base = module[actions[0].func]
    funcs, ok = [base], []
    for a in actions:
        try:
            funcs.append(run(module, a).mod[a.func])
            ok.append(a)
        except (ScheduleError, KeyError):
            continue
    secs = predict_kernels(funcs, model)
    if secs[0] is None:
        return list(actions)
    scored = []
    for a, s in zip(ok, secs[1:]):
        if s is None or s <= 0:
            continue
        scored.append((secs[0] / s, a))
    rest = [a for a in actions if all(a is not b for _, b in scored)]
    scored.sort(key=lambda t: -t[0])             # stable: ties keep the core's order
    return [dataclasses.replace(a, title=speedup_title(a.title, sp)) for sp, a in scored] + rest
