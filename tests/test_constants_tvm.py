"""Interchange with TVM's own param-dict functions (skipped without apache-tvm)."""
import ctypes
import struct

import numpy as np
import pytest

from tirkit.script import params as P

tvm = pytest.importorskip("tvm")
from tvm import runtime  # noqa: E402
from tvm.runtime import _ffi_api  # noqa: E402

pytestmark = pytest.mark.oracle

DTYPES = sorted(P._CODES)


def array_of(dtype, seed=0, shape=(3, 5)):
    npdt = P.numpy_dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype in P._SUBBYTE:
        b = P._SUBBYTE[dtype]
        return rng.integers(0, 1 << b, n, dtype=np.uint8).view(npdt).reshape(shape)
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[npdt.itemsize]
    bits = rng.integers(0, np.iinfo(u).max, n, dtype=u, endpoint=True)
    return bits.view(npdt).reshape(shape)


def packed_size(dtype, n):
    return (n * P._SUBBYTE[dtype] + 7) // 8


def tvm_tensor(a):
    """A TVM tensor of `a`.  TVM's own Python packs only float4; the other sub-byte types are
    given to it as their packed bytes (a big-endian bit stream), which is how TVM stores them."""
    dtype = P.tvm_dtype(a.dtype)
    if dtype not in P._SUBBYTE or dtype == "float4_e2m1fn":
        return runtime.tensor(a)
    t = runtime.empty(a.shape, dtype)
    raw = np.ascontiguousarray(P._pack(a, dtype)[:packed_size(dtype, a.size)])
    _ffi_api.TVMTensorCopyFromBytes(t, raw.ctypes.data_as(ctypes.c_void_p), raw.size)
    return t


def tvm_raw(t, dtype, n):
    """The bytes a TVM tensor stores (packed for sub-byte types)."""
    k = packed_size(dtype, n) if dtype in P._SUBBYTE else n * P.numpy_dtype(dtype).itemsize
    out = np.zeros(k, np.uint8)
    _ffi_api.TVMTensorCopyToBytes(t, out.ctypes.data_as(ctypes.c_void_p), k)
    return out.tobytes()


def tvm_bytes(arrays):
    return bytes(runtime.save_param_dict({k: tvm_tensor(v) for k, v in arrays.items()}))


@pytest.mark.parametrize("dtype", DTYPES)
def test_type_codes_match_what_tvm_writes(dtype):
    data = tvm_bytes({"x": array_of(dtype)})
    code, bits, lanes = struct.unpack_from("<BBH", data, 24 + 9 + 8 + 28)
    assert (code, bits, lanes) == P.type_code(dtype)
    assert str(tvm_tensor(array_of(dtype)).dtype) == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_our_files_load_in_tvm(dtype, tmp_path):
    arrays = {"a": array_of(dtype, 1), "scalar": array_of(dtype, 2, ()),
              "b": array_of(dtype, 3, (7,))}
    path = tmp_path / "ours.params"
    P.save(path, arrays)
    loaded = runtime.load_param_dict(path.read_bytes())
    assert sorted(loaded.keys()) == sorted(arrays)
    for k, a in arrays.items():
        t = loaded[k]
        assert str(t.dtype) == dtype and tuple(t.shape) == a.shape
        if dtype in P._SUBBYTE:                            # TVM's packed storage, bit for bit
            assert tvm_raw(t, dtype, a.size) == tvm_raw(tvm_tensor(a), dtype, a.size)
            if dtype in ("int4", "float4_e2m1fn"):         # TVM's own unpacking agrees
                nib = t.numpy().reshape(-1).view(np.uint8) & 0x0F
                assert nib.tobytes() == (a.reshape(-1).view(np.uint8) & 0x0F).tobytes()
        else:
            got = t.numpy()
            assert got.shape == a.shape and got.tobytes() == a.tobytes()
    if dtype not in P._SUBBYTE:                           # (TVM pads packed types with junk)
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


@pytest.mark.parametrize("dtype", sorted(P._SUBBYTE))
def test_packed_layout_is_a_big_endian_bit_stream(dtype):
    b = P._SUBBYTE[dtype]
    a = array_of(dtype, 6, (11,))
    bits = "".join(format(int(v), "08b")[8 - b:] for v in a.view(np.uint8))
    bits += "0" * (-len(bits) % 8)
    want = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    data = P.dumps({"x": a})
    start = len(data) - a.size                            # one byte a value declared
    assert data[start:start + len(want)] == want
    assert data[start + len(want):] == bytes(a.size - len(want))


def test_float4_packing_matches_tvms_own():
    a = array_of("float4_e2m1fn", 7, (9,))
    t = runtime.tensor(a)                                 # TVM's Python packs float4 itself
    assert tvm_raw(t, "float4_e2m1fn", a.size) == P._pack(a, "float4_e2m1fn")[:5].tobytes()


def test_uint1_is_read_as_old_bool_and_cannot_be_written(tmp_path):
    t = runtime.empty((3,), "uint1")
    data = bytes(runtime.save_param_dict({"x": t}))
    assert struct.unpack_from("<BB", data, 24 + 9 + 8 + 28) == (1, 1)
    with pytest.raises(P.ParamsError) as e:
        P.type_code("uint1")
    assert e.value.code == "constants/unsupported-dtype"
