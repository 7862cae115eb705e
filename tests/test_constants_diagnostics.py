"""Bad constants in a script: one diagnostic with its code on the right line, no traceback,
no follow-on errors, and never data that is not what the script declares."""
import numpy as np
import pytest

import tirkit
from tirkit.script import params as P

from test_constants_format import damaged

SCRIPT = '''from tvm.script import tir as T
from tirkit.script import params
P = params.load("{file}")


@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    w = T.allocate_const(P["{name}"], "{dtype}", [{shape}])
    for i in range(4):
        A[i] = T.float32(1)
'''
LOAD_LINE, CONST_LINE = 3, 8


def check(tmp_path, file="m.params", name="w", dtype="float32", shape="2, 3"):
    path = tmp_path / "k.py"
    text = SCRIPT.format(file=file, name=name, dtype=dtype, shape=shape)
    path.write_text(text)
    diags = tirkit.check(text, str(path))
    result = tirkit.parse(text, str(path))
    return diags, result.module


def codes(diags):
    return [(d.code, d.span.line) for d in diags if d.severity == "error"]


def write(tmp_path, data=None):
    if data is None:
        P.save(tmp_path / "m.params", {"w": np.arange(6, dtype=np.float32).reshape(2, 3)})
    else:
        (tmp_path / "m.params").write_bytes(data)


def test_good_reference_is_clean_and_lazy(tmp_path):
    write(tmp_path)
    diags, mod = check(tmp_path)
    assert codes(diags) == []
    c = mod.constants["w"]
    assert c.external and c._cache is None            # nothing read yet
    assert c.array().tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("kw, code", [
    (dict(name="nope"), "constants/missing-name"),
    (dict(dtype="float16"), "constants/dtype-mismatch"),
    (dict(shape="3, 2"), "constants/shape-mismatch"),
    (dict(shape="6"), "constants/shape-mismatch"),
])
def test_constant_problems_on_the_allocate_const_line(tmp_path, kw, code):
    write(tmp_path)
    diags, mod = check(tmp_path, **kw)
    assert codes(diags) == [(code, CONST_LINE)]
    c = next(iter(mod.constants))
    assert c.array() is None                           # no data rather than wrong data


def test_missing_file_on_the_load_line(tmp_path):
    diags, mod = check(tmp_path, file="absent.params")
    assert codes(diags) == [("constants/missing-file", LOAD_LINE)]
    d = [d for d in diags if d.code == "constants/missing-file"][0]
    assert (d.span.column, d.span.end_column) == (1, len('P = params.load("absent.params")') + 1)
    assert mod.constants["w"].array() is None


@pytest.mark.parametrize("case", sorted(damaged()))
def test_damaged_file_on_the_load_line(tmp_path, case):
    data, code = damaged()[case]
    write(tmp_path, data)
    diags, mod = check(tmp_path, name="a", shape="2, 3")
    assert codes(diags) == [(code, LOAD_LINE)]
    assert mod.constants["w"].array() is None


def test_one_file_problem_reported_once_for_many_kernels(tmp_path):
    text = SCRIPT.format(file="absent.params", name="w", dtype="float32", shape="2, 3")
    text += "\n\n" + text.split("\n\n\n", 1)[1].replace("def f(", "def g(")
    diags = tirkit.check(text, str(tmp_path / "k.py"))
    assert codes(diags) == [("constants/missing-file", LOAD_LINE)]


def test_inline_values_that_do_not_fit_are_errors():
    base = '''from tvm.script import tir as T


@T.prim_func
def f():
    w = T.allocate_const({values}, "{dtype}", [{n}])
    T.evaluate(0)
'''
    for values, dtype in [("[128, 0]", "int8"), ("[-1, 0]", "uint16"), ("[1.5, 2]", "int32"),
                          ("[1e300, 0.0]", "float32"), ("[2, 0]", "bool"),
                          ("[18446744073709551616, 0]", "uint64")]:
        diags = tirkit.check(base.format(values=values, dtype=dtype, n=2))
        assert codes(diags) == [("type/mismatch", 6)], (values, dtype)
