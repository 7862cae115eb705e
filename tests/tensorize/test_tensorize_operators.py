"""Every operator of the oracle set (benchmarks/tensorize_oracle.py) that the AVX2 intrinsic
serves, at its non-divisible shape where one exists: auto_tensorize, the result checks
clean, and the compiled kernel matches the untensorized one and the reference interpreter
bit-exactly on random inputs."""
import sys
from pathlib import Path

import numpy as np
import pytest

import tirkit
from tirkit import codegen
from tirkit.codegen.interp import run_reference
from tirkit.schedule import ScheduleError

from util import AVX2

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from tensorize_oracle import HEAD, operators  # noqa: E402

SMALL = ["GMM odd 100x77x33", "C1D odd L50 3->30", "C2D odd 14x14x60->30",
         "C3D r 8^3x64->64", "DIL odd 14x14x30->20 d2", "T2D odd 14x14x30->20",
         "CAP r 16x16x32 4x4", "GRP r 28x28 g4 32->32"]
REFUSED = {"DEP odd 14x14x30": "no-iterator", "NRM odd 30x70": "no-iterator",
           "GRP odd 14x14 g3 10->6": "padding-waste", "C3D odd 6^3x20->10": "padding-waste",
           "CAP odd 10x10x6 4x4": "padding-waste"}


def _inputs(f, seed):
    rng = np.random.default_rng(seed)
    out = []
    for p in f.params:
        b = f.buffer_of(p)
        shape = [int(s.value) for s in b.shape]
        if b.dtype == "uint8":
            out.append(rng.integers(1, 128, shape).astype("uint8"))
        elif b.dtype == "int8":
            out.append(rng.integers(-128, 128, shape).astype("int8"))
        else:
            out.append(rng.integers(-50, 50, shape).astype("int32"))
    return out


@pytest.mark.parametrize("name", SMALL)
def test_operator_tensorizes_and_runs_exactly(name):
    text = HEAD + dict(operators(("uint8", "int8")))[name]
    mod = tirkit.parse(text).module
    sch = tirkit.Schedule(mod)
    sch.auto_tensorize(sch.get_block("C"), AVX2)
    assert [d for d in tirkit.check(sch.script()) if d.severity == "error"] == []
    f0, f = mod.functions[0][1], sch.mod.functions[0][1]
    args = _inputs(f0, len(name))
    want = [a.copy() for a in args]
    codegen.build(f0, mod)(*want)
    got = [a.copy() for a in args]
    codegen.build(f, sch.mod)(*got)
    assert np.array_equal(got[-1], want[-1])
    if name.startswith("GMM"):
        A, B = args[0].astype(np.int64), args[1].astype(np.int64)
        assert np.array_equal(got[-1], A @ B)
    if np.prod(got[-1].shape) <= 20_000:
        ref = [a.copy() for a in args]
        run_reference(f, ref, module=sch.mod)
        assert np.array_equal(ref[-1], want[-1])


@pytest.mark.parametrize("name,code", sorted(REFUSED.items()))
def test_operator_refused_with_reason(name, code):
    text = HEAD + dict(operators(("uint8", "int8")))[name]
    sch = tirkit.Schedule(tirkit.parse(text).module)
    with pytest.raises(ScheduleError) as e:
        sch.auto_tensorize(sch.get_block("C"), AVX2)
    assert e.value.kind == "auto_tensorize/not-feasible" and f"({code})" in str(e.value)
