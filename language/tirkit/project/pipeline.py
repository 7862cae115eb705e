"""One file's diagnostics as a project reports them: the rules' diagnostics, less the codes
the configuration does not select and those suppression comments silence, plus
`suppression/unused` when asked for.  The CLI and the language server both end here."""
from __future__ import annotations

from ..diagnostics import Diagnostic
from . import suppress
from .config import Config


def finish(text: str, diagnostics, config: Config, path=None, warn_unused=None,
           complete: bool = True) -> list:
    """Filter `diagnostics` (every rule's, for `text`) by `config` and the text's
    suppressions.  `warn_unused` (None: the configuration's `warn-unused-ignores`) adds
    `suppression/unused`; only for a `complete` rule set, since a suppression of a rule that
    did not run is not unused."""
    if warn_unused is None:
        warn_unused = config.warn_unused_ignores
    kept = [d for d in diagnostics if config.enabled(d.code, path)]
    sups = suppress.find(text) if isinstance(text, str) else []
    if sups:
        kept = suppress.apply(kept, sups)
        if warn_unused and complete:
            kept += [d for d in suppress.unused(sups) if config.enabled(d.code, path)]
    return sorted(kept, key=Diagnostic.sort_key)


def check_file(data, path, config: Config, warn_unused=None, functions=None) -> tuple:
    """(text, diagnostics) of one file's bytes, every rule run against the configuration's
    target (`functions`: on the kernels that hold these functions only; no suppression is
    then called unused, since the others' rules did not run)."""
    from .. import check
    from ..script.parse import decode
    text, _ = decode(data)
    diags = check(data, path=path, target=config.target, intrinsics=config.intrinsics,
                  functions=functions)
    return text, finish(text, diags, config, path, warn_unused, complete=functions is None)
