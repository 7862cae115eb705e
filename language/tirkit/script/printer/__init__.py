"""IR -> canonical TVMScript text, in the spelling the source used.

The canonical form is TVM's printer's, in the style of ../shared/examples/valid: dtypes
always written, `T.grid` for nests of plain serial loops, `T.axis.remap` for iterators bound
straight to loops, the implicit root block left out, and a statement longer than 100
columns whose right-hand side is one call split one argument per line.  Comments ride along.

base.py: layout constants and names; exprs.py: expressions and precedence; stmts.py:
statements, loops, blocks; consts.py: the constants hooks; wrap.py: line wrapping;
funcs.py: functions, modules, the composed `Printer` and the entry points.
"""
from .base import INDENT, LINE_LIMIT
from .consts import inline_values
from .funcs import (Printer, free_vars_stmt, imports_for, print_module_class, print_prim_func,
                    to_script)
from .wrap import wrap_line

__all__ = ["INDENT", "LINE_LIMIT", "Printer", "free_vars_stmt", "imports_for",
           "inline_values", "print_module_class", "print_prim_func", "to_script", "wrap_line"]
