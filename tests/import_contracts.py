"""An import-linter contract type for private names (`lint-imports` loads it from pyproject.toml).

import-linter's own `private_modules` contract covers private *modules*; this one covers the
private *names* a module defines: `from tirkit.analysis.cost import _helper` is allowed only in
a module of the same package as `tirkit.analysis.cost` (its siblings), never from another
package. The imports are read from the source with `ast`, so a name imported on any line of a
parenthesised import counts, and so does an import inside a function.
"""
from __future__ import annotations

import ast
import importlib.util
import os

from importlinter import Contract, ContractCheck, fields, output


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _package_dirs(roots) -> dict:
    out = {}
    for root in roots:
        spec = importlib.util.find_spec(root)
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"package {root!r} cannot be found")
        out[root] = list(spec.submodule_search_locations)[0]
    return out


def _source_path(module: str, dirs: dict):
    root, *rest = module.split(".")
    base = os.path.join(dirs[root], *rest)
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = importer.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[:len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


class PrivateNamesContract(Contract):
    """Private names (`_x`) are imported only by the defining module's sibling modules.

    Configuration options:
        - packages: the root packages whose modules are checked.
        - allowed: `importer -> module.name` imports let through, each with its reason in a
          comment beside it (an entry that matches nothing is not an error, so an allowance
          disappears silently once the import is gone). (Optional.)
    """

    type_name = "private_names"

    packages = fields.ListField(subfield=fields.StringField())
    allowed = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph, verbose: bool) -> ContractCheck:
        dirs = _package_dirs(self.packages)
        roots = tuple(self.packages)
        allowed = {a.replace(" ", "") for a in (self.allowed or [])}
        illegal = []
        for importer in sorted(graph.modules):
            if importer.split(".")[0] not in roots:
                continue
            path = _source_path(importer, dirs)
            if path is None:
                continue
            is_package = path.endswith("__init__.py")
            own_package = importer if is_package else importer.rpartition(".")[0]
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom):
                    continue
                source = _resolve(importer, is_package, node)
                if source.split(".")[0] not in roots:
                    continue
                for alias in node.names:
                    if not _private(alias.name) or f"{source}.{alias.name}" in graph.modules:
                        continue        # a public name, or a module (private_modules checks it)
                    src_path = _source_path(source, dirs) or ""
                    defining = source if src_path.endswith("__init__.py") else \
                        source.rpartition(".")[0]
                    if defining != own_package and \
                            f"{importer}->{source}.{alias.name}" not in allowed:
                        illegal.append((importer, node.lineno, source, alias.name))
        return ContractCheck(kept=not illegal, warnings=[], metadata={"illegal": illegal})

    def render_broken_contract(self, check: ContractCheck) -> None:
        output.print_error("Private names may only be imported by modules of the package "
                           "that defines them:", bold=False)
        output.new_line()
        for importer, line, source, name in check.metadata["illegal"]:
            output.print_error(f"- {importer} (l.{line}) imports {name} from {source}", bold=False)
            output.new_line()
