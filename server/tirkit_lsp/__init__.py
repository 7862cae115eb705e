"""tirkit-lsp: a language server for TensorIR kernels written in TVMScript (pygls 2.x).

The server is thin: documents come in, the core (`tirkit`) analyses them off the event
loop, and each feature module under `features/` turns the core's results into LSP answers.
"""
__version__ = "0.1.0"
