"""Property: any tensor of any dtype survives inline printing and the `.params` file bit for
bit (NaN payloads and signs, -0.0, infinities, subnormals, integer extremes)."""
import os
import tempfile

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirkit
from tirkit.script import params as P
from tirkit.script.params_print import inline_values

FILE_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "bfloat16", "float8_e3m4", "float8_e4m3",
               "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
               "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn"]
INLINE_ONLY = ["float6_e2m3fn", "float6_e3m2fn"]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def value_bits(dtype):
    """Bit widths that make a valid value, and the special values' bits."""
    npdt = P.numpy_dtype(dtype)
    u = UINT[npdt.itemsize]
    if dtype == "bool":
        return 1, [0, 1]
    if dtype.startswith(("float4", "float6")):
        return int(dtype[5]), []
    width = npdt.itemsize * 8
    if npdt.kind in "iu":
        info = np.iinfo(npdt)
        special = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=npdt)
        return width, special.view(u).tolist()
    fi = ml_dtypes.finfo(npdt) if dtype not in ("float16", "float32", "float64") else np.finfo(npdt)
    with np.errstate(all="ignore"):
        vals = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, float(fi.max),
                         -float(fi.max), float(fi.smallest_subnormal),
                         -float(fi.smallest_subnormal), float(fi.tiny)], dtype=np.float64)
        bits = vals.astype(npdt).view(u).tolist()
    nan = int(np.array([np.nan]).astype(npdt).view(u)[0])
    return width, bits + [nan ^ 1, nan ^ (1 << (width - 1))]


@st.composite
def tensors(draw, dtypes):
    dtype = draw(st.sampled_from(dtypes))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    n = int(np.prod(shape))
    width, special = value_bits(dtype)
    elem = st.integers(0, (1 << width) - 1)
    if special:
        elem = st.one_of(st.sampled_from(special), elem)
    bits = draw(st.lists(elem, min_size=n, max_size=n))
    npdt = P.numpy_dtype(dtype)
    return dtype, np.array(bits, dtype=UINT[npdt.itemsize]).view(npdt).reshape(shape)


def script(dtype, arr, data=None):
    data = data or inline_values(arr, dtype)
    shape = ", ".join(str(s) for s in arr.shape)
    return f'''from tvm.script import tir as T


@T.prim_func
def f():
    c = T.allocate_const({data}, "{dtype}", [{shape}])
    T.evaluate(0)
'''


def parse_clean(text, path):
    r = tirkit.parse(text, path)
    assert [d for d in r.diagnostics if d.severity == "error"] == [], r.diagnostics
    return r.module


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tensors(FILE_DTYPES + INLINE_ONLY))
def test_inline_form_is_bit_exact(t):
    dtype, arr = t
    text = script(dtype, arr)
    mod = parse_clean(text, None)
    assert same_bits(mod.constants["c"].array(), arr)
    printed = tirkit.to_script(mod)
    again = parse_clean(printed, None)
    assert same_bits(again.constants["c"].array(), arr)
    assert tirkit.to_script(again) == printed                     # a fixpoint


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tensors(FILE_DTYPES))
def test_file_form_is_bit_exact(t):
    dtype, arr = t
    with tempfile.TemporaryDirectory() as d:
        mod = parse_clean(script(dtype, arr), None)
        path = os.path.join(d, "k.params")
        text = tirkit.to_script(mod, params=path, inline_threshold=0)
        assert 'P["c"]' in text
        assert same_bits(P.open_index(path).get("c").load(), arr)
        back = parse_clean(text, os.path.join(d, "k.py"))
        assert same_bits(back.constants["c"].array(), arr)
        assert tirkit.structural_equal(mod, back)


def test_integer_extremes_of_every_width():
    for dtype in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
        info = np.iinfo(dtype)
        arr = np.array([info.min, info.max, 0], dtype=dtype)
        text = script(dtype, arr)
        assert f"[{info.min}, {info.max}, 0]" in text
        assert same_bits(parse_clean(text, None).constants["c"].array(), arr)


def test_special_floats_print_readably():
    arr = np.array([np.inf, -np.inf, np.nan, -0.0, 1e-45], dtype=np.float32)
    payload = np.array([0x7FC00001], dtype=np.uint32).view(np.float32)
    text = inline_values(np.concatenate([arr, payload]), "float32")
    assert text == ('[T.float32("inf"), T.float32("-inf"), T.float32("nan"), -0.0, 1e-45, '
                    'T.reinterpret("float32", T.uint32(0x7FC00001))]')
    bf = np.array([0.1, 3.0e38, 9.2e-41], dtype=ml_dtypes.bfloat16)
    assert inline_values(bf, "bfloat16") == "[0.1, 3e+38, 9e-41]"
