"""`.params` files: TVM's param-dict binary format, read lazily through a memory map.

Layout (little-endian, no padding, names in insertion order)::

    u64 0xF7E58D4F05049CB7   u64 reserved   u64 count   (u64 length, UTF-8 name) * count
    u64 count
    per tensor: u64 0xDD5E40F096B4A13F  u64 reserved  i32 device type  i32 device id  i32 ndim
                u8 type code  u8 bits  u16 lanes  i64 shape[ndim]  i64 byte count  raw bytes

Files written here load in `tvm.runtime.load_param_dict` and files written by
`tvm.runtime.save_param_dict` load here.  Opening a file reads only its headers; a tensor's
bytes are touched when its array is used.  Nothing is ever unpickled.

Used two ways: by the analysis (`open_index`, the headers only) and inside a user's program
(`from tirkit.script import params; P = params.load("model.params")`, arrays on demand).
"""
from __future__ import annotations

import mmap
import os
import struct
import sys
import tempfile
from collections import OrderedDict
from typing import Iterable, Mapping

import numpy as np

from ..lru import LRU

MAGIC = 0xF7E58D4F05049CB7
TENSOR_MAGIC = 0xDD5E40F096B4A13F
CPU = 1                                   # DLPack device type written for every tensor

# TVM dtype -> (DLPack type code, bits) as TVM 0.27's save_param_dict writes them
# (checked against TVM in tests/test_constants_tvm.py).
_CODES = {
    "bool": (6, 8),
    "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
    "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64),
    "float16": (2, 16), "float32": (2, 32), "float64": (2, 64),
    "bfloat16": (4, 16),
    "float8_e3m4": (7, 8), "float8_e4m3": (8, 8), "float8_e4m3b11fnuz": (9, 8),
    "float8_e4m3fn": (10, 8), "float8_e4m3fnuz": (11, 8), "float8_e5m2": (12, 8),
    "float8_e5m2fnuz": (13, 8), "float8_e8m0fnu": (14, 8),
    # packed sub-byte types: see _pack
    "float4_e2m1fn": (17, 4), "float6_e2m3fn": (15, 6), "float6_e3m2fn": (16, 6),
    "int4": (0, 4), "uint4": (1, 4), "int2": (0, 2), "uint2": (1, 2), "int1": (0, 1),
}
# dtype -> bits of the types TVM keeps packed (ml_dtypes holds them one value a byte)
_SUBBYTE = {k: bits for k, (_, bits) in _CODES.items() if bits < 8}
_FROM_CODE = {v: k for k, v in _CODES.items()}
# Older TVM wrote bool as a 1-bit uint, a byte a value; TVM 0.27 writes uint1 with the same
# header (packed), so (1, 1) stays bool and uint1 cannot be stored.
_FROM_CODE[(1, 1)] = "bool"

_HEAD = struct.Struct("<QQQ")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_TENSOR = struct.Struct("<QQiiiBBH")


class ParamsError(Exception):
    """A `.params` file that cannot be used; `code` is a `constants/...` diagnostic code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype that holds one value of a TVM dtype bit-exactly."""
    if dtype == "bool":
        return np.dtype(np.bool_)
    if dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64"):
        return np.dtype(dtype)
    import ml_dtypes
    t = getattr(ml_dtypes, dtype, None)
    if t is None:
        raise ParamsError("constants/unsupported-dtype", f"no array type holds {dtype}")
    return np.dtype(t)


def tvm_dtype(np_dtype) -> str:
    """The TVM dtype of a numpy array's dtype (`bfloat16` and the float8 types via ml_dtypes)."""
    d = np.dtype(np_dtype)
    name = "bool" if d == np.bool_ else d.name
    if name not in _CODES:
        raise ParamsError("constants/unsupported-dtype",
                          f"{name} cannot be stored in a .params file")
    return name


def type_code(dtype: str) -> tuple:
    """(code, bits, lanes) of a dtype in the file's tensor header."""
    if dtype not in _CODES:
        raise ParamsError("constants/unsupported-dtype",
                          f"{dtype} cannot be stored in a .params file")
    code, bits = _CODES[dtype]
    return code, bits, 1


# ---- reading ----------------------------------------------------------------------------
class Entry:
    """One tensor of a file: its header, and its bytes on demand."""
    __slots__ = ("name", "dtype", "shape", "offset", "nbytes", "index")

    def __init__(self, name, dtype, shape, offset, nbytes, index):
        self.name, self.dtype, self.shape = name, dtype, shape
        self.offset, self.nbytes, self.index = offset, nbytes, index

    def __repr__(self):
        return f"Entry({self.name!r}, {self.dtype}, {list(self.shape)}, {self.nbytes} bytes)"

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def mismatch(self, dtype: str, extents) -> ParamsError | None:
        """Why this tensor cannot be a constant of `dtype` and `extents` (None when it can)."""
        if dtype != self.dtype:
            return ParamsError("constants/dtype-mismatch",
                               f"'{self.name}' holds {self.dtype}, declared {dtype}")
        if tuple(int(x) for x in extents) != tuple(self.shape):
            return ParamsError("constants/shape-mismatch",
                               f"'{self.name}' has shape {list(self.shape)}, declared "
                               f"{[int(x) for x in extents]}")
        return None

    def raw(self) -> memoryview:
        return self.index.view(self.offset, self.nbytes)

    def load(self) -> np.ndarray:
        """The tensor as a read-only array over the memory map (no copy; packed sub-byte
        types unpacked into a new array)."""
        if self.dtype in _SUBBYTE:
            return _unpack(self.raw(), self.size, self.dtype).reshape(self.shape)
        arr = np.frombuffer(self.raw(), dtype=numpy_dtype(self.dtype), count=self.size)
        return arr.reshape(self.shape)


class ParamsIndex:
    """The headers of one `.params` file; the tensors' bytes stay in the memory map."""

    def __init__(self, path: str, mm, entries: "OrderedDict[str, Entry]"):
        self.path = path
        self._mm = mm
        self.entries = entries

    def get(self, name) -> Entry | None:
        return self.entries.get(name)

    def names(self) -> list:
        return list(self.entries)

    def __len__(self):
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries.values())

    def view(self, offset, nbytes) -> memoryview:
        if self._mm is None:
            return memoryview(b"")
        return memoryview(self._mm)[offset:offset + nbytes]

    def close(self):
        """Drop the memory map (arrays already loaded keep it alive until they go)."""
        _index_cache.pop(os.path.realpath(self.path), None)
        self._mm = None


def _parse(path: str, buf) -> ParamsIndex:
    size = len(buf)
    pos = 0

    def need(n, what):
        if n < 0 or pos + n > size:
            raise ParamsError("constants/truncated",
                              f"the file ends inside {what} (byte {size} of at least {pos + n})")

    if size < 8:
        need(8, "the header")
    if _U64.unpack_from(buf, 0)[0] != MAGIC:
        raise ParamsError("constants/bad-magic", "not a param-dict file (wrong magic number)")
    need(_HEAD.size, "the header")
    _, _, count = _HEAD.unpack_from(buf, 0)
    pos = _HEAD.size
    if count > (size - pos) // 8:
        need(count * 8, "the list of names")
    names = []
    for i in range(count):
        need(8, f"name {i}")
        (n,) = _U64.unpack_from(buf, pos)
        pos += 8
        need(n, f"name {i}")
        try:
            names.append(bytes(buf[pos:pos + n]).decode("utf-8"))
        except UnicodeDecodeError:
            raise ParamsError("constants/corrupt", f"name {i} is not valid UTF-8") from None
        pos += n
    need(8, "the tensor count")
    (tcount,) = _U64.unpack_from(buf, pos)
    pos += 8
    if tcount != count:
        raise ParamsError("constants/corrupt", f"the file names {count} tensors but holds "
                          f"{tcount}")
    index = ParamsIndex(path, None, OrderedDict())
    seen = {}
    for i, name in enumerate(names):
        need(_TENSOR.size, f"the header of '{name}'")
        magic, _, _dev, _devid, ndim, code, bits, lanes = _TENSOR.unpack_from(buf, pos)
        if magic != TENSOR_MAGIC:
            raise ParamsError("constants/bad-magic", f"tensor '{name}' does not start with the "
                              "tensor magic number")
        pos += _TENSOR.size
        if ndim < 0 or ndim > 64:
            raise ParamsError("constants/corrupt", f"tensor '{name}' has {ndim} dimensions")
        need(8 * ndim + 8, f"the shape of '{name}'")
        shape = struct.unpack_from(f"<{ndim}q", buf, pos)
        pos += 8 * ndim
        (nbytes,) = _I64.unpack_from(buf, pos)
        pos += 8
        if any(s < 0 for s in shape):
            raise ParamsError("constants/corrupt", f"tensor '{name}' has shape {list(shape)}")
        dtype = _FROM_CODE.get((code, bits))
        if dtype is None or lanes != 1:
            what = f"type code {code}, {bits} bits"
            if lanes != 1:
                what += f" x{lanes}"
            raise ParamsError("constants/unsupported-dtype",
                              f"tensor '{name}' is {what}, which tirkit cannot hold")
        n = 1
        for s in shape:
            n *= s
        expected = n * numpy_dtype(dtype).itemsize
        if nbytes != expected:
            raise ParamsError("constants/byte-count", f"tensor '{name}' ({dtype}, shape "
                              f"{list(shape)}) should have {expected} bytes, the file says "
                              f"{nbytes}")
        need(nbytes, f"the data of '{name}'")
        if name in seen:
            raise ParamsError("constants/duplicate-name", f"two tensors are named '{name}' "
                              f"(numbers {seen[name]} and {i})")
        seen[name] = i
        index.entries[name] = Entry(name, dtype, tuple(shape), pos, nbytes, index)
        pos += nbytes
    return index


_index_cache = LRU(32)          # real path -> (stamp, ParamsIndex)


def open_index(path) -> ParamsIndex:
    """The headers of a `.params` file, memory-mapped; raises ParamsError.  Cached while the
    file is unchanged (same inode, size and modification time)."""
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ParamsError("constants/missing-file", "no such file") from None
    except OSError as e:
        raise ParamsError("constants/missing-file", e.strerror or "cannot be read") from None
    key = os.path.realpath(path)
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _index_cache.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        with open(path, "rb") as fh:
            if st.st_size == 0:
                mm = None
            else:
                mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except IsADirectoryError:
        raise ParamsError("constants/missing-file", "is a directory, not a file") from None
    except (OSError, ValueError) as e:
        raise ParamsError("constants/missing-file",
                          getattr(e, "strerror", None) or "cannot be read") from None
    index = _parse(path, mm if mm is not None else b"")
    index._mm = mm
    _index_cache.put(key, (stamp, index))
    return index


def loads(data: bytes) -> dict:
    """name -> array (copies) of a param-dict held in memory."""
    index = _parse("<bytes>", memoryview(data))
    index._mm = data
    return {e.name: np.array(e.load()) for e in index}


# ---- packed sub-byte types ----------------------------------------------------------------
# TVM keeps tensors of fewer than 8 bits a value packed: n values of b bits take
# ceil(n * b / 8) bytes, a big-endian bit stream (the first value in the most significant bits
# of the first byte, so 4-bit types hold the first value in the high nibble; the last byte is
# padded with 0 bits).  Its files declare one byte per value and hold the packed bytes followed
# by bytes that mean nothing (written here as zeros).
def _pack(arr: np.ndarray, dtype: str) -> np.ndarray:
    b = _SUBBYTE[dtype]
    u = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    n = u.size
    bits = np.unpackbits(u[:, None], axis=1)[:, 8 - b:]
    packed = np.packbits(bits.reshape(-1))
    return np.concatenate([packed, np.zeros(n - packed.size, np.uint8)])


def _unpack(raw, n: int, dtype: str) -> np.ndarray:
    b = _SUBBYTE[dtype]
    packed = np.frombuffer(raw, dtype=np.uint8, count=(n * b + 7) // 8)
    bits = np.unpackbits(packed)[:n * b].reshape(n, b)
    full = np.zeros((n, 8), np.uint8)
    full[:, 8 - b:] = bits
    out = np.packbits(full, axis=1).reshape(n).view(numpy_dtype(dtype))
    out.flags.writeable = False
    return out


# ---- writing ----------------------------------------------------------------------------
def _items(arrays) -> list:
    """[(name, dtype, shape, buffer)] from a mapping or pairs of name -> array | Entry."""
    pairs = arrays.items() if isinstance(arrays, Mapping) else arrays
    out = []
    seen = set()
    for name, value in pairs:
        if not isinstance(name, str):
            raise TypeError(f"a constant's name must be a string, not {type(name).__name__}")
        if name in seen:
            raise ParamsError("constants/duplicate-name", f"two tensors are named '{name}'")
        seen.add(name)
        if isinstance(value, Entry):
            out.append((name, value.dtype, value.shape, value.raw()))
            continue
        arr = np.asarray(value)
        dtype = tvm_dtype(arr.dtype)
        shape = arr.shape
        arr = np.ascontiguousarray(arr).reshape(-1)      # (a 0-d array comes back 1-d)
        if dtype in _SUBBYTE:
            arr = _pack(arr, dtype)
        out.append((name, dtype, shape, memoryview(arr.view(np.uint8))))
    return out


def _chunks(items) -> Iterable:
    yield _HEAD.pack(MAGIC, 0, len(items))
    for name, *_ in items:
        b = name.encode("utf-8")
        yield _U64.pack(len(b)) + b
    yield _U64.pack(len(items))
    for _, dtype, shape, data in items:
        code, bits, lanes = type_code(dtype)
        yield (_TENSOR.pack(TENSOR_MAGIC, 0, CPU, 0, len(shape), code, bits, lanes)
               + struct.pack(f"<{len(shape)}q", *shape) + _I64.pack(data.nbytes))
        yield data


def dumps(arrays) -> bytes:
    """The param-dict bytes of name -> array (numpy; ml_dtypes for bfloat16, float8/6/4 and
    int4/uint4/int2/uint2/int1)."""
    return b"".join(bytes(c) for c in _chunks(_items(arrays)))


def save(path, arrays) -> None:
    """Write name -> array (or Entry of another file) to `path`, through a temporary file and
    a rename, so a crash never leaves a half-written file."""
    items = _items(arrays)
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tirkit-", suffix=".params", dir=d)
    try:
        with os.fdopen(fd, "wb") as fh:
            for c in _chunks(items):
                fh.write(c)
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except OSError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---- inside a user's program --------------------------------------------------------------
class ParamsFile(Mapping):
    """`params.load(path)`: name -> read-only array, each read from the file when first used."""

    def __init__(self, path: str, index: ParamsIndex):
        self.path = path
        self.index = index

    def __getitem__(self, name) -> np.ndarray:
        e = self.index.get(name)
        if e is None:
            raise KeyError(f"{self.path} has no constant named {name!r}")
        return e.load()

    def __iter__(self):
        return iter(self.index.entries)

    def __len__(self):
        return len(self.index)

    def __repr__(self):
        return f"<params {self.path!r}: {len(self)} tensors>"


def load(path) -> ParamsFile:
    """Open a `.params` file; a relative path is taken from the calling script's folder (as
    the analysis reads `P = params.load("x.params")`).  Raises ParamsError."""
    path = os.fspath(path)
    full = path
    if not os.path.isabs(path):
        caller = sys._getframe(1).f_globals.get("__file__")
        if caller:
            full = os.path.join(os.path.dirname(os.path.abspath(caller)), path)
    try:
        return ParamsFile(path, open_index(full))
    except ParamsError as e:
        raise ParamsError(e.code, f"{path}: {e.message}") from None


__all__ = ["ParamsError", "ParamsIndex", "ParamsFile", "Entry", "open_index", "load", "save",
           "dumps", "loads", "numpy_dtype", "tvm_dtype", "MAGIC", "TENSOR_MAGIC"]
