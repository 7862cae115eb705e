"""`identical`: structural equality over the very same variables (the check schedule
primitives and the printer use to see that two indices are one)."""
from tirkit.ir import expr as E
from tirkit.ir.equality import identical, structural_equal
from tirkit.diagnostics import Span


def test_same_variables_same_structure_spans_ignored():
    i = E.Var("i", "int32")
    a = E.Add(i, E.IntImm("int32", 1), "int32", Span(1, 1, 1, 5))
    b = E.Add(i, E.IntImm("int32", 1), "int32", Span(7, 3, 7, 9))
    assert identical(a, b)


def test_other_variable_operator_constant_or_dtype_differ():
    i, j = E.Var("i", "int32"), E.Var("i", "int32")
    one = E.IntImm("int32", 1)
    a = E.Add(i, one, "int32")
    assert not identical(a, E.Add(j, one, "int32"))          # a variable of the same name
    assert structural_equal(a, E.Add(j, one, "int32"))       # ... equal up to renaming
    assert not identical(a, E.Sub(i, one, "int32"))
    assert not identical(a, E.Add(i, E.IntImm("int32", 2), "int32"))
    assert not identical(E.IntImm("int32", 1), E.IntImm("int64", 1))
    assert not identical(E.Call("float32", "exp", (i,), ()), E.Call("float32", "log", (i,), ()))
