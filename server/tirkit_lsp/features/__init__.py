"""LSP features: one module each, each with `setup(server)`."""
from __future__ import annotations

import importlib
import logging

log = logging.getLogger("tirkit_lsp")

FEATURES = (
    "lifecycle",          # shutdown and exit: the process ends within a second of `exit`
    "configuration",      # tirkit.* settings: workspace/configuration, initializationOptions
    "diagnostics",        # push (debounced fast set, full set on save) and pull diagnostics
    "hover",              # blocks, loops, buffers, variables, constants, `T.` names
    "document_symbols",   # kernels, blocks, buffers
    "definition",         # go to definition of buffers, variables, blocks
    "references",         # every use of a buffer, variable or block
    "highlight",          # document highlight of the symbol under the cursor
    "rename",             # rename buffers and variables inside their kernel
    "call_hierarchy",     # the callers and callees of a module's functions
    "formatting",         # canonical printer, kernels only, changed lines only
    "inlay_hints",        # loop trip counts, iterator domains
    "code_lens",          # per kernel: FLOPs and estimated time
    "completion",         # the `T.` namespace with its documentation
    "signature_help",     # inside `Module.f(`: f's parameters and the one being typed
    "canonical_form",     # command tirkit.canonicalForm: the canonical text of a kernel
    "code_actions",       # schedule primitives at a loop or a block; the trace as Python
    "asymptotic",         # sparse iterations: cost on hover, the dominated-order quick fix
    "tune_kernel",        # command tirkit.tuneKernel ("Tune this kernel"): search, progress, edit
)


def setup_all(server) -> None:
    for name in FEATURES:
        try:
            importlib.import_module(f"{__name__}.{name}").setup(server)
            server.features.append(name)
        except Exception as e:          # a broken feature must not stop the others
            log.exception("feature %s could not be set up: %s", name, e)
