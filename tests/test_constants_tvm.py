"""Interchange with TVM's own param-dict functions (skipped without apache-tvm)."""
import struct

import numpy as np
import pytest

from tirkit.script import params as P

tvm = pytest.importorskip("tvm")
from tvm import runtime  # noqa: E402

pytestmark = pytest.mark.oracle

DTYPES = sorted(P._CODES)


def array_of(dtype, seed=0, shape=(3, 5)):
    npdt = P.numpy_dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype == "float4_e2m1fn":
        return rng.integers(0, 16, n, dtype=np.uint8).view(npdt).reshape(shape)
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[npdt.itemsize]
    bits = rng.integers(0, np.iinfo(u).max, n, dtype=u, endpoint=True)
    return bits.view(npdt).reshape(shape)


def tvm_bytes(arrays):
    return bytes(runtime.save_param_dict({k: runtime.tensor(v) for k, v in arrays.items()}))


@pytest.mark.parametrize("dtype", DTYPES)
def test_type_codes_match_what_tvm_writes(dtype):
    data = tvm_bytes({"x": array_of(dtype)})
    code, bits, lanes = struct.unpack_from("<BBH", data, 24 + 9 + 8 + 28)
    assert (code, bits, lanes) == P.type_code(dtype)
    assert str(runtime.tensor(array_of(dtype)).dtype) == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_our_files_load_in_tvm(dtype, tmp_path):
    arrays = {"a": array_of(dtype, 1), "scalar": array_of(dtype, 2, ()),
              "b": array_of(dtype, 3, (7,))}
    path = tmp_path / "ours.params"
    P.save(path, arrays)
    loaded = runtime.load_param_dict(path.read_bytes())
    assert sorted(loaded.keys()) == sorted(arrays)
    for k, a in arrays.items():
        got = loaded[k].numpy()
        assert str(loaded[k].dtype) == dtype
        assert got.shape == a.shape and got.tobytes() == a.tobytes()
    if dtype != "float4_e2m1fn":                          # (TVM pads float4 with junk)
        assert path.read_bytes() == tvm_bytes(arrays)     # byte for byte what TVM writes


@pytest.mark.parametrize("dtype", DTYPES)
def test_tvm_files_load_in_ours(dtype, tmp_path):
    arrays = {"w": array_of(dtype, 4, (2, 3, 4)), "v": array_of(dtype, 5, (1,))}
    path = tmp_path / "tvm.params"
    path.write_bytes(tvm_bytes(arrays))
    index = P.open_index(path)
    assert index.names() == list(arrays)
    for k, a in arrays.items():
        e = index.get(k)
        got = e.load()
        assert e.dtype == dtype and got.dtype == a.dtype
        assert got.shape == a.shape and got.tobytes() == a.tobytes()


@pytest.mark.parametrize("dtype, code", [("float6_e2m3fn", 15), ("float6_e3m2fn", 16)])
def test_packed_float6_from_tvm_is_reported_not_misread(dtype, code, tmp_path):
    t = runtime.empty((4,), dtype)                        # 4 values: 3 packed bytes in TVM
    data = bytes(runtime.save_param_dict({"x": t}))
    assert struct.unpack_from("<BB", data, 24 + 9 + 8 + 28) == (code, 6)
    path = tmp_path / "f6.params"
    path.write_bytes(data)
    with pytest.raises(P.ParamsError) as e:
        P.open_index(path)
    assert e.value.code == "constants/unsupported-dtype"
