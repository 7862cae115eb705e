"""arith's public views for the schedule (writeback) and the code generator (linear,
interval): folding travels with the bounds, not through a global switch."""
from concurrent.futures import ThreadPoolExecutor

from tirkit.arith import writeback as A
from tirkit.arith.interval import interval
from tirkit.arith.linear import coefficient, linear_form, separates
from tirkit.ir import expr as E
from tirkit.script.printer import Printer

from arith_util import add, c, fdiv, fmod, i, j, mul

text = Printer().expr


def test_unit_range_variables_fold_only_when_the_bounds_say_so():
    e = add(mul(i, c(4)), j)
    plain = {id(i): (0, 7), id(j): (3, 3)}
    assert text(A.simplify(e, plain)) == "i * 4 + j"
    folding = A.Bounds(plain, {id(j)})
    assert text(A.simplify(e, folding)) == "i * 4 + 3"


def test_folding_on_threads_does_not_leak_between_calls():
    # the schedule used to switch folding on in a module-level dict around calls: a call on
    # another thread saw the switch; now every call gets what its own bounds say
    e = add(mul(i, c(4)), j)
    plain = {id(i): (0, 7), id(j): (3, 3)}
    folding = A.Bounds(plain, {id(j)})

    def one(n):
        b = folding if n % 2 else plain
        return n % 2, text(A.simplify(e, b))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(400)))
    assert {r for r in results} == {(0, "i * 4 + j"), (1, "i * 4 + 3")}


def test_forms_keep_dtype_and_order_when_written_back():
    x = E.Var("x", "int64")
    e = E.Add(E.Mul(E.IntImm("int64", 2), x, "int64"), E.IntImm("int64", -1), "int64")
    form = A.to_form(e, {})
    assert form.dtype == "int64" and form.terms == {x: 2} and form.const == -1
    back = A.to_expr(form, neg_add=True)
    assert back.dtype == "int64" and text(back) == "x * T.int64(2) + T.int64(-1)"


def test_interval_uses_the_simplifier():
    r = {id(i): (0, 7), id(j): (0, 3)}
    # (4i + j) // 4 is i: bounded by i's range, not by 31 // 4 and the like
    assert interval(fdiv(add(mul(i, c(4)), j), c(4)), r) == (0, 7)
    assert interval(E.Sub(add(i, j), i, "int32"), r) == (0, 3)
    assert interval(E.Ramp(mul(i, c(4)), c(1), 4, "int32x4"), r) == (0, 31)
    assert interval(add(i, E.Var("n", "int32")), r) is None


def test_linear_views_for_the_code_generator():
    form = linear_form(add(mul(i, c(3)), fdiv(j, c(2))))
    assert form.terms[i] == 3 and len(form.atoms()) == 1
    assert coefficient(add(mul(i, c(3)), j), i) == 3
    assert coefficient(fdiv(i, c(2)), i) is None
    # A[i * 4 + j] with j < 4: distinct i, distinct elements; A[i + j] overlaps
    r = {id(j): (0, 3)}
    assert separates([(add(mul(i, c(4)), j),)], i, r)
    assert not separates([(add(i, j),)], i, r)


def test_a_fused_loop_separates_through_its_parts_when_they_tell_its_values_apart():
    # f fuses a 2 x 16 nest: row block f // 16 (rows of 8) and column block f % 16 (of 4)
    f = E.Var("f", "int32")
    r = {id(i): (0, 7), id(j): (0, 3)}
    index = (add(mul(fdiv(f, c(16)), c(8)), i), add(mul(fmod(f, c(16)), c(4)), j))
    assert separates([index], f, r, domain=(0, 31))
    # without its domain the parts cannot be checked; with one part only, f = 0 and f = 16
    # would share the columns of f % 16 = 0
    assert not separates([index], f, r)
    assert not separates([(index[1],)], f, r, domain=(0, 31))
    # the column block too narrow for its tile: f % 16 * 2 + j overlaps its neighbour
    narrow = (index[0], add(mul(fmod(f, c(16)), c(2)), j))
    assert not separates([narrow], f, r, domain=(0, 31))
