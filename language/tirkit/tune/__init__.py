"""Validated search: sketch rules, an evolutionary search ranked by the cost model, every
candidate validated before it is built and measured, measurement local or on Ray.

    from tirkit.tune import tune
    result = tune(module, "matmul", trials=64)         # TuneResult
    result.best_seconds, result.stats.line(), result.trace()

Modules: `space` (sketch rules; `tiles`: perfect tile sizes; `gpu`: the CUDA sketch),
`search` (the evolutionary search), `validate`, `measure` (builder and the measurement every
runner runs), `runners` (in-process, a local process pool), `ray_runner` (Ray, optional),
`database` (JSON lines), `models` (the cost model protocol and its analytic stand-in),
`edit` (the tuned file text).
The command is `tirkit tune` (cli.py); the editor's "Tune this kernel" is a server feature.
"""
from .search import Candidate, Stats, TuneError, TuneResult, tune

__all__ = ["tune", "TuneResult", "TuneError", "Candidate", "Stats"]
