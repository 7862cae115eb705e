"""Constants through print and parse: inline and `.params` forms, `tirkit fmt`, stable names."""
import ml_dtypes
import numpy as np

import tirkit
from tirkit.cli import main as cli
from tirkit.ir.constants import Constant, ConstantTable
from tirkit.ir.stmt import IRModule
from tirkit.script import params as P

SCRIPT = '''from tvm.script import tir as T
from tirkit.script import params
P = params.load("model.params")


@T.prim_func
def kernel(A: T.Buffer((8,), "float32")):
    big = T.allocate_const(P["big"], "float32", [1024, 1024])
    q = T.allocate_const(P["q"], "int8", [64, 3, 3, 3])
    h = T.allocate_const(P["h"], "bfloat16", [300])
    small = T.allocate_const([0.1, -0.0, 3e-45, 65504.0], "float32", [4])
    for i in range(8):
        A[i] = T.float32(1)
'''


def model_arrays():
    rng = np.random.default_rng(3)
    return {
        "big": rng.standard_normal((1024, 1024)).astype(np.float32),
        "q": rng.integers(-128, 128, (64, 3, 3, 3), dtype=np.int8),
        "h": rng.standard_normal(300).astype(ml_dtypes.bfloat16),
    }


def parse_file(path, text=None):
    if text is not None:
        path.write_text(text)
    r = tirkit.parse(path.read_text(), str(path))
    assert [d for d in r.diagnostics if d.severity == "error"] == []
    return r.module


def inlined(mod):
    """The same module with every constant's values held inline (copies)."""
    table = ConstantTable()
    for c in mod.constants:
        table.items[c.name] = Constant(c.name, c.dtype, c.shape, inline=np.array(c.array()))
    return IRModule(mod.functions, mod.name, table, mod.attrs, None, mod.spelling)


def test_one_inline_three_external_round_trip(tmp_path):
    arrays = model_arrays()
    P.save(tmp_path / "model.params", arrays)
    mod = parse_file(tmp_path / "k.py", SCRIPT)
    assert [c.external for c in mod.constants] == [True, True, True, False]

    # file-backed constants keep their references; the small one stays inline
    text = tirkit.to_script(mod)
    assert 'P = params.load("model.params")' in text and 'P["big"]' in text
    assert "[0.1, -0.0, 3e-45, 65504.0]" in text
    again = parse_file(tmp_path / "k2.py", text)
    assert tirkit.structural_equal(mod, again)
    assert tirkit.to_script(again) == text

    # values held in memory print to a new file and read back bit-identical
    out = tmp_path / "out"
    out.mkdir()
    text2 = tirkit.to_script(inlined(mod), params=out / "k.params")
    assert 'P = params.load("k.params")' in text2 and 'P["q"]' in text2
    assert "P[\"small\"]" not in text2
    back = parse_file(out / "k.py", text2)
    assert tirkit.structural_equal(mod, back)
    index = P.open_index(out / "k.params")
    assert index.names() == ["big", "q", "h"]
    for name, a in arrays.items():
        got = index.get(name).load()
        assert got.dtype == a.dtype and got.shape == a.shape and got.tobytes() == a.tobytes()


def test_threshold_decides_and_names_stay_stable(tmp_path):
    mod = inlined(parse_file(tmp_path / "k.py", SCRIPT.split("P = ")[0] + "\n\n" + '''
@T.prim_func
def f():
    a = T.allocate_const([1, 2, 3, 4, 5], "int32", [5])
    T.evaluate(0)

@T.prim_func
def g():
    a = T.allocate_const([6, 7, 8, 9, 10], "int32", [5])
    b = T.allocate_const([1, 2, 3, 4], "int32", [4])
    T.evaluate(0)
'''))
    assert [c.name for c in mod.constants] == ["a", "a_1", "b"]
    path = tmp_path / "m.params"
    P.save(path, {"a": np.array([6, 7, 8, 9, 10], np.int32), "other": np.ones(2, np.int8)})
    text = tirkit.to_script(mod, params=path, inline_threshold=4)
    # a constant is filed under its module name, made unique against other tensors of the
    # file: f's "a" meets the file's different "a"; g's "a_1" meets f's; b (4 values) stays
    assert 'a = T.allocate_const(P["a_1"]' in text.split("def g")[0]
    assert 'a = T.allocate_const(P["a_1_1"]' in text.split("def g")[1]
    assert "[1, 2, 3, 4]" in text
    index = P.open_index(path)
    assert index.names() == ["a", "other", "a_1", "a_1_1"]  # existing entries kept, in order
    assert index.get("a_1").load().tolist() == [1, 2, 3, 4, 5]
    assert tirkit.structural_equal(parse_file(tmp_path / "m.py", text), mod)
    # printing again changes nothing
    before = path.read_bytes()
    assert tirkit.to_script(mod, params=path, inline_threshold=4) == text
    assert path.read_bytes() == before


def test_fmt_moves_large_constants_out_and_is_idempotent(tmp_path):
    values = ", ".join(f"{i * 0.25}" for i in range(100))
    src = tmp_path / "k.py"
    src.write_text(f'''"""A kernel."""
import os
from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    w = T.allocate_const([{values}], "float32", [100])
    s = T.allocate_const([1, 2, 3], "int8", [3])
    for i in range(4):
        A[i] = T.float32(1)
''')
    assert cli(["fmt", "--check", str(src)]) == 1
    assert not (tmp_path / "k.params").exists()            # --check writes nothing
    assert cli(["fmt", str(src)]) == 0
    text = src.read_text()
    lines = text.split("\n")
    assert lines[3:5] == ["from tirkit.script import params", 'P = params.load("k.params")']
    assert 'w = T.allocate_const(P["w"], "float32", [100])' in text
    assert "[1, 2, 3]" in text
    w = P.open_index(tmp_path / "k.params").get("w").load()
    assert w.tolist() == [i * 0.25 for i in range(100)]
    assert cli(["fmt", "--check", str(src)]) == 0
    assert tirkit.check(text, str(src)) == []


def test_fmt_threshold_option_and_existing_load_line(tmp_path):
    P.save(tmp_path / "data.params", {"keep": np.arange(3, dtype=np.int16)})
    src = tmp_path / "k.py"
    src.write_text('''from tvm.script import tir as T
from tirkit.script import params as prm
W = prm.load("data.params")


@T.prim_func
def f():
    k = T.allocate_const(W["keep"], "int16", [3])
    v = T.allocate_const([1, 2, 3, 4, 5, 6], "int16", [6])
    T.evaluate(0)
''')
    assert cli(["fmt", "--inline-threshold", "5", str(src)]) == 0
    text = src.read_text()
    assert text.count("load(") == 1
    assert 'v = T.allocate_const(W["v"], "int16", [6])' in text
    assert P.open_index(tmp_path / "data.params").names() == ["keep", "v"]
    assert tirkit.check(text, str(src)) == []


def test_file_constants_and_a_new_file_get_distinct_names(tmp_path):
    P.save(tmp_path / "model.params", model_arrays())
    mod = parse_file(tmp_path / "k.py", SCRIPT)
    table = mod.constants
    small = table["small"]
    table.items["small"] = Constant("small", "float32", (4,), inline=np.array(small.array()))
    text = tirkit.to_script(mod, params=tmp_path / "extra.params", inline_threshold=2)
    assert 'P = params.load("model.params")' in text
    assert 'P_1 = params.load("extra.params")' in text
    assert 'P_1["small"]' in text and 'P["big"]' in text
    assert tirkit.structural_equal(parse_file(tmp_path / "k2.py", text), mod)


def test_packed_float6_goes_to_the_file_and_reads_back_exactly(tmp_path):
    import ml_dtypes
    arr = np.arange(64, dtype=np.uint8).view(ml_dtypes.float6_e2m3fn)
    table = ConstantTable()
    mod = parse_file(tmp_path / "k.py", SCRIPT.split("P = ")[0] + "\n\n" + '''
@T.prim_func
def f():
    c = T.allocate_const([''' + ", ".join(["0.5"] * 64) + '''], "float6_e2m3fn", [64])
    T.evaluate(0)
''')
    table.items["c"] = Constant("c", "float6_e2m3fn", (64,), inline=arr)
    mod = IRModule(mod.functions, mod.name, table, mod.attrs, None, mod.spelling)
    text = tirkit.to_script(mod, params=tmp_path / "x.params", inline_threshold=4)
    assert 'P["c"]' in text
    got = P.open_index(tmp_path / "x.params").get("c").load()
    assert got.dtype == arr.dtype and got.tobytes() == arr.tobytes()
    assert tirkit.structural_equal(parse_file(tmp_path / "k2.py", text), mod)
