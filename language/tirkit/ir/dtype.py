"""TVM data types as canonical strings ("float32", "int8x4", "float8_e4m3fn", "handle").

A dtype is kept as its string; `DType` parses it once (cached) for the questions the
core asks: kind, bits, lanes.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

# the dtype of a value whose type could not be read (its annotation is an error, which a
# diagnostic reports): analyses go on with it, and nothing reports it a second time
ERROR_DTYPE = "unknown"

_FLOAT8 = ("float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
           "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")
_FLOAT_SMALL = ("float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn")
_RE = re.compile(r"^(bool|handle|void|int|uint|float|bfloat|"
                 + "|".join(sorted(_FLOAT8 + _FLOAT_SMALL, key=len, reverse=True))
                 + r")(\d*)(?:x(vscalex)?(\d+))?$")


class DType(NamedTuple):
    kind: str        # "int" | "uint" | "float" | "bfloat" | "bool" | "handle" | "void" | "float8_e4m3fn" ...
    bits: int
    lanes: int
    scalable: bool = False

    @property
    def is_float(self) -> bool:
        return self.kind in ("float", "bfloat") or self.kind.startswith(("float8", "float6", "float4"))

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_uint(self) -> bool:
        return self.kind == "uint"

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def is_handle(self) -> bool:
        return self.kind == "handle"

    def element(self) -> str:
        return element_of(str_of(self))

    def with_lanes(self, lanes: int) -> str:
        return str_of(DType(self.kind, self.bits, lanes, self.scalable))


def str_of(d: DType) -> str:
    if d.kind in ("bool", "handle", "void"):
        base = d.kind
    elif "_" in d.kind:                      # float8_e4m3fn etc. carry their width
        base = d.kind
    else:
        base = f"{d.kind}{d.bits}"
    if d.lanes != 1:
        base += f"xvscalex{d.lanes}" if d.scalable else f"x{d.lanes}"
    return base


MAX_LANES = 65535       # TVM keeps a dtype's lanes in 16 bits


@lru_cache(maxsize=None)
def parse_dtype(s: str) -> DType | None:
    """The DType of a TVM dtype string, or None when the string is not a dtype."""
    if not isinstance(s, str):
        return None
    m = _RE.match(s)
    if not m:
        return None
    kind, bits, scalable, lanes = m.group(1), m.group(2), m.group(3), m.group(4)
    lanes = int(lanes) if lanes else 1
    if not 1 <= lanes <= MAX_LANES:
        return None
    if kind in ("bool",):
        if bits:
            return None
        return DType("bool", 1, lanes, bool(scalable))
    if kind in ("handle", "void"):
        return DType(kind, 64 if kind == "handle" else 0, lanes) if not bits else None
    if kind.startswith(("float8", "float6", "float4")):
        if bits:
            return None
        return DType(kind, int(kind[5]), lanes, bool(scalable))
    if not bits:
        return None
    b = int(bits)
    if kind in ("int", "uint") and b not in (1, 4, 8, 16, 32, 64):
        return None
    if kind == "float" and b not in (16, 32, 64):
        return None
    if kind == "bfloat" and b != 16:
        return None
    return DType(kind, b, lanes, bool(scalable))


def is_dtype(s) -> bool:
    return parse_dtype(s) is not None


@lru_cache(maxsize=None)
def element_of(s: str) -> str:
    d = parse_dtype(s)
    if d is None or d.lanes == 1:
        return s
    return str_of(DType(d.kind, d.bits, 1))


def lanes_of(s: str) -> int:
    d = parse_dtype(s)
    return d.lanes if d else 1


def bits_of(s: str) -> int:
    d = parse_dtype(s)
    return d.bits if d else 0


def bytes_of(s: str) -> int:
    """Storage size of one value of dtype s (vector lanes included); bool takes a byte."""
    d = parse_dtype(s)
    if d is None:
        return 0
    return max(1, (d.bits + 7) // 8) * d.lanes


def is_float(s: str) -> bool:
    d = parse_dtype(s)
    return bool(d and d.is_float)


def is_int(s: str) -> bool:
    d = parse_dtype(s)
    return bool(d and d.is_int)


def is_bool(s: str) -> bool:
    d = parse_dtype(s)
    return bool(d and d.is_bool)


def int_range(s: str) -> tuple[int, int]:
    d = parse_dtype(s)
    if d.kind == "uint":
        return 0, (1 << d.bits) - 1
    if d.kind == "bool":
        return 0, 1
    return -(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1


# Names the script spells as `T.<dtype>(...)`: every scalar dtype with a constructor.
SCALAR_DTYPES = tuple(
    [f"int{b}" for b in (8, 16, 32, 64)] + [f"uint{b}" for b in (8, 16, 32, 64)]
    + ["float16", "float32", "float64", "bfloat16", "bool", "handle"] + list(_FLOAT8)
    + list(_FLOAT_SMALL)
)
