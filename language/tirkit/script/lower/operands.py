"""What TVM refuses of an operator's operands, each a `type/mismatch` diagnostic on the
operand while the expression is still built: floor and truncated division or modulo of
floats or by a constant zero, a constant shift amount outside the shifted type, a
non-boolean operand of `not`/`and`/`or` or of a condition, a non-integer operand of a
bitwise operator or shift, operands of `T.fma` of different or non-float dtypes."""
from __future__ import annotations

from ...ir import dtype as D
from ...ir import expr as E
from ...ir.dtype import ERROR_DTYPE


class OperandMixin:
    def integer_division(self, what, a, b, n):
        """TVM's floor and truncated division and modulo take integers, and refuse a constant
        zero divisor: a `type/mismatch` error for each (the expression is still built)."""
        for v in (a, b):
            d = D.parse_dtype(v.dtype)
            if d is not None and d.is_float:
                self.diag("type/mismatch", f"{what} takes integers, not {v.dtype} (divide with "
                          "'/' and take T.floor, or use T.fmod)", n)
                return
        if type(b) is E.IntImm and b.value == 0:
            self.diag("type/mismatch", f"{what} divides by zero", n)

    def shift_amount(self, a, b, node):
        """A constant shift amount outside [0, bits of the shifted type): an error for int32
        and int64, whose shifts TVM refuses then (`x >> 40` for an int32 `x`); a warning for
        the other integer types, which TVM lets through and the compiled code shifts into an
        undefined value."""
        d = D.parse_dtype(a.dtype)
        if type(b) is not E.IntImm or d is None or not (d.is_int or d.is_bool) or \
                0 <= b.value < d.bits:
            return
        index = d.kind == "int" and d.bits in (32, 64) and d.lanes == 1
        self.diag("type/mismatch", f"a shift of {a.dtype} by {b.value}: the amount must lie "
                  f"in [0, {d.bits})" + ("" if index else "; the result is undefined"), node,
                  severity="error" if index else "warning")

    def boolean_operand(self, what, v, node):
        """A `type/mismatch` error for an operand of `not`, `and`, `or` or the condition of
        `a if c else b` that is a TIR value but not a boolean: TVM refuses them (`not n` for an
        int32 `n`); compare it instead (`n != 0`)."""
        if isinstance(v, E.PrimExpr) and v.dtype != ERROR_DTYPE and \
                not D.is_bool(v.dtype):
            self.diag("type/mismatch", f"{what} takes a boolean, not {v.dtype} (compare it, "
                      "as in x != 0)", node)

    def integer_operands(self, what, values, nodes):
        """A `type/mismatch` error on each operand of a bitwise operator or shift that is not
        an integer (TVM refuses `0.5 >> s`); the expression is still built."""
        for v, node in zip(values, nodes):
            d = D.parse_dtype(v.dtype)
            if d is not None and not (d.is_int or d.is_bool) and v.dtype != ERROR_DTYPE:
                self.diag("type/mismatch", f"{what} takes integers, not {v.dtype}", node)

    def fused_operands(self, xs, literals, n) -> list:
        """`T.fma(a, b, c)`'s operands brought to one dtype, a literal taking the others':
        different dtypes or a non-float one is an error (TVM's LLVM build finds no
        `llvm.fmuladd` for them)."""
        dtype = next((x.dtype for x, lit in zip(xs, literals) if not lit), xs[0].dtype)
        xs = [self.convert_literal(x, dtype, n) if lit and x.dtype != dtype else x
              for x, lit in zip(xs, literals)]
        if ERROR_DTYPE in [x.dtype for x in xs]:
            return xs
        where = n.args if len(n.args) == len(xs) else [n] * len(xs)
        bad = next((i for i, x in enumerate(xs) if x.dtype != dtype), None)
        if bad is not None:
            self.diag("type/mismatch", f"T.fma takes three operands of one dtype: this one is "
                      f"{xs[bad].dtype}, the first {dtype}", where[bad])
        elif not D.is_float(dtype):
            self.diag("type/mismatch", f"T.fma computes on floating-point values, not {dtype} "
                      "(TVM's LLVM build has no fused multiply-add for it)", n)
        return xs
