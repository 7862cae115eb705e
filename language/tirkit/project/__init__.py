"""A project's everyday workflow: configuration files, suppression comments, whole-tree
checks (parallel, cached) and report formats (SARIF, GitHub annotations, statistics).

The CLI and the language server both call these modules; neither holds their logic.
"""
