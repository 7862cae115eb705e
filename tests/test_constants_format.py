"""The `.params` reader and writer: layout, laziness, every kind of damaged file."""
import os
import struct

import ml_dtypes
import numpy as np
import pytest

from tirkit.script import params as P


def sample():
    rng = np.random.default_rng(7)
    return {
        "w": rng.standard_normal((3, 5)).astype(np.float32),
        "q": rng.integers(-128, 128, (17,), dtype=np.int8),
        "h": np.array([1.5, -0.0, np.inf, -3.25], dtype=ml_dtypes.bfloat16),
        "s": np.array(2.5, dtype=np.float64),                     # 0-d
        "flags": np.array([True, False, True]),
        "e": np.zeros((0, 4), dtype=np.int32),                    # empty
    }


def test_layout_by_hand():
    data = P.dumps({"ab": np.array([1.0, 2.0], dtype=np.float32)})
    magic, reserved, count = struct.unpack_from("<QQQ", data, 0)
    assert (magic, reserved, count) == (0xF7E58D4F05049CB7, 0, 1)
    assert struct.unpack_from("<Q", data, 24)[0] == 2 and data[32:34] == b"ab"
    assert struct.unpack_from("<Q", data, 34)[0] == 1
    tmagic, _, dev, devid, ndim, code, bits, lanes = struct.unpack_from("<QQiiiBBH", data, 42)
    assert (tmagic, dev, devid, ndim, code, bits, lanes) == (0xDD5E40F096B4A13F, 1, 0, 1, 2, 32, 1)
    assert struct.unpack_from("<qq", data, 74) == (2, 8)
    assert np.frombuffer(data[90:], dtype=np.float32).tolist() == [1.0, 2.0]
    assert len(data) == 98


def test_save_and_open_keep_order_shapes_and_bits(tmp_path):
    arrays = sample()
    path = tmp_path / "m.params"
    P.save(path, arrays)
    index = P.open_index(path)
    assert index.names() == list(arrays)
    for name, a in arrays.items():
        e = index.get(name)
        assert e.dtype == P.tvm_dtype(a.dtype) and e.shape == a.shape
        got = e.load()
        assert got.dtype == a.dtype and got.shape == a.shape
        assert got.tobytes() == a.tobytes()
        assert not got.flags.writeable
    assert P.loads(path.read_bytes())["w"].tobytes() == arrays["w"].tobytes()


def test_open_index_reads_headers_only_and_is_cached(tmp_path):
    path = tmp_path / "big.params"
    P.save(path, {"a": np.arange(1 << 20, dtype=np.int32), "b": np.ones(3, np.float16)})
    index = P.open_index(path)
    assert index._mm is not None                  # memory-mapped, not read into memory
    assert index.get("b").offset > 4 << 20
    assert P.open_index(path) is index            # unchanged file: same index
    P.save(path, {"a": np.arange(5, dtype=np.int32)})
    again = P.open_index(path)
    assert again is not index and again.get("a").shape == (5,)
    assert index.get("b").load().tolist() == [1.0, 1.0, 1.0]   # the old map stays valid


def test_mismatch_reports_dtype_then_shape(tmp_path):
    path = tmp_path / "m.params"
    P.save(path, {"w": np.zeros((2, 3), np.float32)})
    e = P.open_index(path).get("w")
    assert e.mismatch("float32", [2, 3]) is None
    assert e.mismatch("float16", [2, 3]).code == "constants/dtype-mismatch"
    assert e.mismatch("float32", [3, 2]).code == "constants/shape-mismatch"


def test_runtime_load_relative_to_the_calling_script(tmp_path):
    P.save(tmp_path / "k.params", {"w": np.arange(4, dtype=np.int16)})
    script = tmp_path / "run.py"
    script.write_text("from tirkit.script import params\nP = params.load('k.params')\n"
                      "OUT = (list(P), P['w'].tolist())\n")
    ns = {"__file__": str(script)}
    exec(compile(script.read_text(), str(script), "exec"), ns)
    assert ns["OUT"] == (["w"], [0, 1, 2, 3])
    with pytest.raises(KeyError):
        ns["P"]["nope"]
    with pytest.raises(P.ParamsError) as e:
        P.load(str(tmp_path / "absent.params"))
    assert e.value.code == "constants/missing-file"


def test_save_is_atomic_and_refuses_duplicates(tmp_path):
    path = tmp_path / "m.params"
    P.save(path, {"w": np.ones(3, np.float32)})
    before = path.read_bytes()
    with pytest.raises(P.ParamsError):
        P.save(path, [("w", np.ones(2)), ("w", np.ones(2))])
    with pytest.raises(P.ParamsError):
        P.save(path, {"c": np.ones(2, np.complex64)})
    assert path.read_bytes() == before
    assert [f for f in os.listdir(tmp_path) if f.startswith(".tirkit-")] == []


# ---- damaged files: (code) ------------------------------------------------------------------
def _valid():
    return P.dumps({"a": np.arange(6, dtype=np.float32).reshape(2, 3),
                    "b": np.array([1, 2], dtype=np.int8)})


def _tensor_header(data, k):
    """Offset of the k-th tensor header in _valid()'s bytes."""
    pos = 24 + 9 + 9 + 8
    for _ in range(k):
        ndim = struct.unpack_from("<i", data, pos + 24)[0]
        nbytes = struct.unpack_from("<q", data, pos + 32 + 8 * ndim)[0]
        pos += 32 + 8 * ndim + 8 + nbytes
    return pos


def damaged():
    d = _valid()
    out = {}
    out["empty"] = (b"", "constants/truncated")
    out["short header"] = (d[:20], "constants/truncated")
    out["inside a name"] = (d[:33], "constants/truncated")
    out["inside tensor header"] = (d[:_tensor_header(d, 1) + 10], "constants/truncated")
    out["inside data"] = (d[:-1], "constants/truncated")
    out["file magic"] = (b"\x00" + d[1:], "constants/bad-magic")
    t1 = _tensor_header(d, 1)
    out["tensor magic"] = (d[:t1] + b"\x01" + d[t1 + 1:], "constants/bad-magic")
    nb = _tensor_header(d, 0) + 32 + 16          # byte count of "a" (ndim 2)
    out["byte count"] = (d[:nb] + struct.pack("<q", 20) + d[nb + 8:], "constants/byte-count")
    out["duplicate"] = (d.replace(b"\x01\x00\x00\x00\x00\x00\x00\x00b",
                                  b"\x01\x00\x00\x00\x00\x00\x00\x00a", 1),
                        "constants/duplicate-name")
    code = _tensor_header(d, 1) + 28
    out["unknown type"] = (d[:code] + bytes([15, 7]) + d[code + 2:], "constants/unsupported-dtype")
    out["counts differ"] = (d[:42] + struct.pack("<Q", 1) + d[50:], "constants/corrupt")
    return out


@pytest.mark.parametrize("case", sorted(damaged()))
def test_damaged_file_raises_its_code(tmp_path, case):
    data, code = damaged()[case]
    path = tmp_path / "bad.params"
    path.write_bytes(data)
    with pytest.raises(P.ParamsError) as e:
        P.open_index(path)
    assert e.value.code == code


def test_missing_and_directory(tmp_path):
    for p in (tmp_path / "nope.params", tmp_path):
        with pytest.raises(P.ParamsError) as e:
            P.open_index(p)
        assert e.value.code == "constants/missing-file"


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=6),
       st.integers(0, 400))
def test_any_damage_is_a_params_error_or_exact_data(flips, cut):
    data = bytearray(_valid())
    for pos, byte in flips:
        if pos < len(data):
            data[pos] = byte
    data = bytes(data[:cut]) if cut < len(data) else bytes(data)
    try:
        index = P._parse("<bytes>", memoryview(data))
    except P.ParamsError as e:
        assert e.code.startswith("constants/")
        return
    index._mm = data
    for e in index:            # whatever parsed must be readable, with the declared size
        arr = e.load()
        assert arr.shape == e.shape and arr.nbytes == e.nbytes
