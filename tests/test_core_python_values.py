"""Python values in a kernel and at the top of its file, computed as TVM's parser computes them:
Python's operators and builtins on plain values, TVM's own rules (and refusals) on TIR values,
and the constants TVM's operators fold as they build an expression."""
import time

import pytest

import tirkit
from tirkit.syntax import pyconst
from tirkit.syntax.constants import top_level_constants

CLASSIC = "from tvm.script import tir as T\n\n\n"


def _errors(text):
    return [(d.span.line, d.span.column, d.message) for d in tirkit.parse(text).diagnostics
            if d.severity == "error"]


def _store_lines(text):
    r = tirkit.parse(text)
    assert [d for d in r.diagnostics if d.severity == "error"] == []
    return [ln.strip() for ln in tirkit.to_script(r.module).splitlines() if "] = " in ln]


PLAIN = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((16, 4), "int32")):
    A[0, 0] = (1 << 4) + (2 ** 3) + ((5 & 3) | 8) + (6 ^ 3) + (64 >> 2) + ~0
    A[0, 1] = max(3, 7, 5) + min(3, 2) + abs(-4) + int(2.75) + round(2.6) + pow(2, 5)
    A[0, 2] = len(A.shape) + sum((1, 2, 3)) + int(bool(3)) + int(float(7) / 2)
'''


def test_operators_and_builtins_on_plain_values_compute_as_python_does():
    assert _store_lines(PLAIN) == [
        "A[0, 0] = " + str((1 << 4) + 2 ** 3 + ((5 & 3) | 8) + (6 ^ 3) + (64 >> 2) + ~0),
        "A[0, 1] = " + str(7 + 2 + 4 + 2 + 3 + 32),
        "A[0, 2] = " + str(2 + 6 + 1 + 3)]


def test_top_level_constants_may_be_computed_from_earlier_ones():
    text = CLASSIC.replace("\n\n\n", "\n") + '''
N = 1 << 6
M = 2 ** 5
S = (N, 2 * N)
R = max(N, M) // 2
W = S[1] - 1
U = some_function(3)


@T.prim_func
def f(A: T.Buffer(S, "float32"), B: T.Buffer((R,), "float32")):
    for i in range(W - 95):
        B[i] = A[i, i + U]
'''
    assert top_level_constants(text) == {"N": 64, "M": 32, "S": (64, 128), "R": 32,
                                         "W": 127}
    r = tirkit.parse(text)
    # `U` is a call of the user's own: it is not computed, and its use is an undefined name
    assert [(d.line, d.code) for d in r.diagnostics] == [(14, "name/undefined")]
    ((_, f),) = r.module.prim_funcs()
    assert [[int(x.value) for x in b.shape] for _, b in f.buffer_map] == [[64, 128], [32]]


@pytest.mark.parametrize("expr, column, message", [
    ("10 ** 10 ** 9", 12, "operator '**' makes a value too large for a kernel "
                          "(more than 4096 bits)"),
    ("1 << 100000", 12, "operator '<<' makes a value too large for a kernel "
                        "(more than 4096 bits)"),
    ("len('ab' * 10 ** 9)", 16, "operator '*' makes a sequence of more than 65536 items"),
    ("7 // 0", 12, "integer division or modulo by zero"),
    ("10.0 ** 400", 12, "operator '**' overflows"),
    ("max(())", 12, "max() does not apply to these operands"),
])
def test_plain_values_past_the_bounds_are_refused_at_once(expr, column, message):
    text = CLASSIC + f'''@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    A[0] = {expr}
'''
    start = time.perf_counter()
    assert _errors(text) == [(6, column, message)]
    # refused before it is computed, and at the top of a file too
    assert top_level_constants(f"X = {expr}\n") == {}
    assert time.perf_counter() - start < 5


def test_const_error_names_the_operation():
    assert pyconst.binary("+", 2, 3) == 5
    with pytest.raises(pyconst.ConstError, match="operator '-' does not apply"):
        pyconst.binary("-", "a", 1)
    with pytest.raises(pyconst.ConstError, match="not a constant expression"):
        pyconst.evaluate(pyconst.parse("open('x')"), {})
    with pytest.raises(pyconst.ConstError, match="not a constant expression"):
        pyconst.evaluate(pyconst.parse("max"), {})


REFUSED = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((16,), "int32"), F: T.Buffer((16,), "float32"),
      I8: T.Buffer((16,), "int8"), n: T.int32, x: T.float32, U: T.Buffer((16,), "uint8")):
    for i in range(16):
        with T.block("b"):
            vi = T.axis.spatial(16, i)
            A[vi] = A[vi] ** 2
            F[vi] = F[vi] // 2.0 + T.floormod(F[vi], x)
            A[vi] = A[vi] // 0 + T.truncmod(A[vi], 0)
            F[vi] = F[vi] / 0.0
            A[vi] = T.Cast("int32", not n) + T.Cast("int32", (n > 0) and n)
            A[vi] = A[vi] if n else 0
            F[vi] = T.Select(n > 0, F[vi], 1) + x + 1e40
            I8[vi] = I8[vi] & 300
            A[vi] = max(A[vi], 3) + abs(n)
            A[vi] = (A[vi] if 1 else 0) + T.Select(A[vi], 1, 2)
            if 0.5: A[vi] = 1
            A[vi] = T.Cast("int32", -U[vi])
'''


def test_what_tvm_refuses_on_tir_values_is_an_error_where_it_is():
    assert _errors(REFUSED) == [
        (10, 21, "operator '**' does not apply to TIR values: use T.pow(a, b)"),
        (11, 21, "operator '//' takes integers, not float32 (divide with '/' and take "
                 "T.floor, or use T.fmod)"),
        (11, 36, "T.floormod takes integers, not float32 (divide with '/' and take T.floor, "
                 "or use T.fmod)"),
        (12, 21, "operator '//' divides by zero"),
        (12, 34, "T.truncmod divides by zero"),
        (13, 21, "division by zero"),
        (14, 41, "'not' takes a boolean, not int32 (compare it, as in x != 0)"),
        (14, 74, "'and' takes a boolean, not int32 (compare it, as in x != 0)"),
        (15, 30, "the condition of 'a if c else b' takes a boolean, not int32 (compare it, "
                 "as in x != 0)"),
        (16, 21, "T.Select takes two values of one dtype, got float32 and int32 "
                 "(T.if_then_else converts them)"),
        (16, 53, "1e+40 does not fit in float32 (its finite values lie within ±3.40282e+38)"),
        (17, 31, "300 does not fit in int8"),
        (18, 21, "Python's max() does not apply to TIR values: use T.max"),
        # a plain condition is a bool (TVM: "Expected Python bool or TIR bool"), and
        # T.Select's a TIR boolean
        (19, 31, "the condition of 'a if c else b' takes a bool, not the int 1 (compare it, "
                 "as in N != 0)"),
        (19, 52, "the condition of T.Select takes a boolean, not int32 (compare it, as in "
                 "x != 0)"),
        (20, 16, "the condition of 'if' takes a bool, not the float 0.5 (compare it, as in "
                 "N != 0)"),
        # TVM: "cannot make uint from negative value -1"
        (21, 37, "unary '-' does not apply to uint8: TVM multiplies by -1, which uint8 cannot "
                 "hold (subtract from a value, or cast to a signed type first)"),
    ]


FOLDED = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((16,), "int32"), F: T.Buffer((16,), "float32"),
      L: T.Buffer((16,), "int64"), I8: T.Buffer((16,), "int8"), n: T.int32):
    for i in range(16):
        A[i] = T.int8(3) + A[i] + (T.uint8(200) + 100) + (A[i] + True)
        F[i] = F[i] + T.float16(1) + T.float32(1) / T.float32(4) + (T.int8(3) + 0.5)
        I8[i] = T.cast(3, "int8") + I8[i].astype("int8")
        F[i] = A[i].astype("float32") + T.cast(A[i], "float32")
        A[i] = (A[i] if n > 0 else 0) + T.if_then_else(T.bool(True), A[i], 2)
        L[i] = i + 5000000000
        L[i] = T.Cast("int64", -T.int32(-2147483648)) + T.Cast("int64", -T.int8(-128))
'''


def test_constants_fold_as_tvms_operators_fold_them():
    assert _store_lines(FOLDED) == [
        "A[i] = 3 + A[i] + 300 + (A[i] + 1)",
        "F[i] = F[i] + T.float32(1) + T.float32(0.25) + T.float32(3.5)",
        "I8[i] = T.int8(3) + I8[i]",
        'F[i] = T.Cast("float32", A[i]) + T.Cast("float32", A[i])',
        "A[i] = T.if_then_else(n > 0, A[i], 0) + A[i]",
        "L[i] = T.Cast(\"int64\", i) + T.int64(5000000000)",
        # the negation of the smallest value wraps to itself, as TVM folds it
        'L[i] = T.Cast("int64", -2147483648) + T.Cast("int64", T.int8(-128))']


def test_a_power_is_one_token_where_python_has_it():
    # the lexer took the first star of `**` for a multiplication: `2 ** 4` did not parse
    from tirkit.syntax.parser import parse_chunk
    text = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((2 ** 4,), "float32")):
    for i in range(2**2 * 4):
        A[i] = T.pow(A[i], T.float32(2))
'''
    r = tirkit.parse(text)
    assert r.diagnostics == []
    assert 'A: T.Buffer((16,), "float32")' in tirkit.to_script(r.module)
    assert "for i in range(16):" in tirkit.to_script(r.module)
    chunk = parse_chunk("def g(*args, **kwargs):\n    h(*args, **kwargs)\n    y = 2 ** -x\n")
    assert chunk.errors == []


def test_a_block_predicate_is_a_boolean():
    # TVM: "Expect Block.predicate to be a bool expression"
    text = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((16,), "int32"), n: T.int32):
    for i in range(16):
        with T.block("b"):
            vi = T.axis.spatial(16, i)
            T.where(n)
            A[vi] = 1
'''
    assert _errors(text) == [(9, 21, "T.where takes a boolean, not int32 (compare it, as in "
                                     "x != 0)")]
    assert _errors(text.replace("T.where(n)", "T.where(n > 0)")) == []


def test_an_integer_too_large_for_a_float_is_a_range_error_not_a_crash():
    # float() of such an int raises OverflowError: it reached the user as an `internal` error
    text = CLASSIC + '''@T.prim_func
def f(F: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float64")):
    F[0] = T.float32(1 << 2000)
    D[1] = T.float64(10 ** 400)
    F[2] = T.cast(-(10 ** 400), "float32")
'''
    assert _errors(text) == [
        (6, 12, "11481306... (603 digits) does not fit in float32 (its finite values lie "
                "within ±3.40282e+38)"),
        (7, 12, "10000000... (401 digits) does not fit in float64 (its finite values lie "
                "within ±1.79769e+308)"),
        (8, 12, "-1000000... (401 digits) does not fit in int64")]


def test_top_level_assignments_of_several_names():
    text = '''from tvm.script import tir as T
M = N = K = 64
A, B = 4, N * 2   # two at once
C: int = A + 1
S = "a#b"
D = [1, 2]
if __name__ == "__main__":
    pass
'''
    assert top_level_constants(text) == {"M": 64, "N": 64, "K": 64, "A": 4, "B": 128, "C": 5,
                                         "S": "a#b"}


def test_a_constant_shift_amount_lies_within_the_type():
    # TVM refuses it for int32 and int64 (its index types), and lets an int8 one through
    text = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((4,), "int32"), L: T.Buffer((4,), "int64"), I8: T.Buffer((4,), "int8")):
    A[0] = A[0] >> 32
    A[1] = T.shift_left(A[1], -1) + (A[1] << 31)
    L[2] = L[2] << 63
    I8[3] = I8[3] << 8
'''
    got = [(d.span.line, d.span.column, d.severity, d.message)
           for d in tirkit.parse(text).diagnostics]
    assert got == [
        (6, 20, "error", "a shift of int32 by 32: the amount must lie in [0, 32)"),
        (7, 31, "error", "a shift of int32 by -1: the amount must lie in [0, 32)"),
        (9, 22, "warning", "a shift of int8 by 8: the amount must lie in [0, 8); the result "
                           "is undefined")]


def test_a_float_literal_out_of_range_is_reported_once():
    # the literal is made float32 (checked there) and then taken as the float32 operand of an
    # int or float16 one: that second step made a second, identical error
    text = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((4,), "int32"), F: T.Buffer((4,), "float32"), H: T.Buffer((4,), "float16")):
    F[0] = A[0] + 1e40
    F[1] = T.Cast("float32", H[1] + 1e40)
'''
    r = tirkit.parse(text)
    assert [(d.span.line, d.span.column, d.message) for d in r.diagnostics
            if d.severity == "error"] == [
        (6, 19, "1e+40 does not fit in float32 (its finite values lie within ±3.40282e+38)"),
        (7, 37, "1e+40 does not fit in float32 (its finite values lie within ±3.40282e+38)")]
    assert 'F[0] = T.Cast("float32", A[0]) + T.float32(1e+40)' in tirkit.to_script(r.module)


ORDERED = '''from tvm.script import tir as T
N = 8


@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in range(N):
        A[i] = T.float32(1)


N = 2
M = 4


def build():
    @T.prim_func
    def g(A: T.Buffer((16,), "float32")):
        for i in range(N + M):
            A[i] = T.float32(1)
    return g
'''


def _extents(text):
    r = tirkit.parse(text)
    return {name: int(f.body.extent.value) for name, f in r.module.prim_funcs()
            if hasattr(f.body, "extent")}


def test_a_kernel_sees_the_constants_assigned_above_it_with_their_values_there():
    # Python runs the decorator where the kernel stands: `f` reads N = 8; `g` is made when
    # `build()` runs, after the whole file, and reads N = 2 and M = 4
    assert tirkit.parse(ORDERED).diagnostics == []
    assert _extents(ORDERED) == {"f": 8, "g": 6}


def test_a_constant_assigned_only_below_a_kernel_is_undefined_there_and_says_where_it_is():
    text = ORDERED.replace("range(N)", "range(N + M)")
    (d,) = tirkit.parse(text).diagnostics
    assert (d.code, d.span.line, d.span.column) == ("name/undefined", 7, 24)
    assert d.message.startswith("name 'M' is not defined yet: it is assigned at line 12")
    ((span, note),) = d.related
    assert (span.line, span.column, note) == (12, 1, "'M' is assigned here")
    # the nested kernel is still lowered, and without an error
    assert _extents(text)["g"] == 6


def test_a_module_method_sees_only_the_constants_above_its_class():
    text = '''from tvm.script import ir as I
from tvm.script import tir as T


@I.ir_module
class Mod:
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        for i in range(K):
            A[i] = T.float32(1)


K = 4
'''
    (d,) = tirkit.parse(text).diagnostics
    assert (d.code, d.span.line, d.span.column) == ("name/undefined", 9, 24)
    assert "assigned at line 13" in d.message
    above = text.replace("\n\n\nK = 4\n", "\n").replace(
        "from tvm.script import tir as T\n", "from tvm.script import tir as T\nK = 4\n")
    assert _extents(above) == {"f": 4}
