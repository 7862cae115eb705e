"""The measured host peak (codegen/llvm/peak.py): the loops compute what they claim (checked by
running them on random inputs against numpy), the forms follow the features, and the
measurement gives rates in the range the loop's form allows."""
import numpy as np
import pytest

from tirkit.codegen.llvm import engine
from tirkit.codegen.llvm.peak import (CHAINS, Compiled, dot_loop, enabled_features, fma_loop,
                                      measure_peak)

FEATS = enabled_features()


def test_enabled_features_reads_llvm_feature_string():
    assert enabled_features("+avx2,-avx512f,+fma,-avx512vnni") == {"avx2", "fma"}
    cpu_feats = engine.host_cpu()[1]
    assert all(f"+{f}" in cpu_feats for f in FEATS)


def test_forms_follow_features():
    assert fma_loop({"avx2", "fma"})[2].startswith("ymm")
    assert fma_loop({"avx512f", "avx2"})[2].startswith("zmm")
    assert fma_loop({"avx512f"})[1] == 2 * fma_loop({"avx2"})[1]
    assert "vpdpbusd.512" in dot_loop({"avx512f", "avx512vnni", "avx2"})[0]
    assert "vpdpbusd.256" in dot_loop({"avxvnni", "avx2"})[0]
    avx2 = dot_loop({"avx2", "fma"})
    assert "pmadd.ub.sw" in avx2[0] and "vpdpbusd" not in avx2[0]
    assert dot_loop({"sse4.2"}) is None


def test_fma_loop_computes_chained_fmas():
    ir, _, _ = fma_loop(FEATS)
    lanes = 16 if "avx512f" in FEATS else 8
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 1.0, lanes).astype(np.float32)
    y = rng.uniform(0.5, 1.5, lanes).astype(np.float32)
    inp = np.concatenate([x, y]).view(np.uint8).copy()
    out = np.zeros(lanes, np.float32)
    n = 5
    Compiled(ir, "fma_loop").run(n, inp, out)
    acc = x.astype(np.float64)
    for _ in range(n):
        acc = acc * x + y
    np.testing.assert_allclose(out, CHAINS * acc, rtol=1e-5)


def _avx2_dot_step(acc, y):
    """vpmaddubsw (u8 x s8, pairs summed, saturated to i16), vpmaddwd with ones, vpaddd."""
    u = acc.view(np.uint8).astype(np.int32)
    s = y.view(np.int8).astype(np.int32)
    pairs = np.clip((u * s).reshape(-1, 2).sum(1), -32768, 32767)
    return (acc.astype(np.int64) + pairs.reshape(-1, 2).sum(1)).astype(np.int32)


def _vnni_step(acc, x, y):
    u = x.view(np.uint8).astype(np.int64)
    s = y.view(np.int8).astype(np.int64)
    return (acc.astype(np.int64) + (u * s).reshape(-1, 4).sum(1)).astype(np.int32)


def test_dot_loop_computes_int8_dot_products():
    dot = dot_loop(FEATS)
    if dot is None:
        pytest.skip("no 256-bit integer vectors on this CPU")
    ir, ops, form = dot
    lanes = ops // (CHAINS * 8)
    rng = np.random.default_rng(11)
    x = rng.integers(1, 2**31 - 1, lanes).astype(np.int32)
    y = rng.integers(-2**31, 2**31 - 1, lanes).astype(np.int32)
    out = np.zeros(lanes, np.int32)
    n = 3
    Compiled(ir, "dot_loop").run(n, np.concatenate([x, y]).view(np.uint8).copy(), out)
    acc = x.copy()
    for _ in range(n):
        acc = _vnni_step(acc, x, y) if "vpdpbusd" in form else _avx2_dot_step(acc, y)
    want = (CHAINS * acc.astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(out, want)


def test_measured_peak_is_positive_and_within_the_form():
    p = measure_peak()
    assert p.threads == 1 and p.cpu == engine.host_cpu()[0]
    assert set(p.features) <= FEATS
    lanes = 16 if "avx512f" in FEATS else 8
    # At most two vector FMAs per cycle at 7 GHz: a rate above that means a timing bug.
    assert 1e9 < p.fp32 < 2 * lanes * 2 * 7e9
    assert (p.int8 is None) == (dot_loop(FEATS) is None)
    assert measure_peak() is p                     # cached
    assert "GFLOP/s" in p.describe() and "1 thread" in p.describe()


@pytest.mark.parametrize("feats,loop,instruction", [
    ({"avx2", "fma", "avx512f"}, fma_loop, "vfmadd"),
    ({"avx2", "avx512f", "avx512bw", "avx512vl", "avx512vnni"}, dot_loop, "vpdpbusd"),
    ({"avx2", "avxvnni"}, dot_loop, "vpdpbusd"),
])
def test_loops_for_other_hosts_compile_to_their_instructions(feats, loop, instruction):
    """Compiled (not run) for a CPU with those features: the loop is the instruction it
    claims to measure, on registers of the width it counts."""
    import llvmlite.binding as llvm
    engine.init()
    ir, ops, form = loop(feats)
    tm = llvm.Target.from_default_triple().create_target_machine(
        cpu="znver4", features=",".join(f"+{f}" for f in sorted(feats)), opt=3)
    mod = llvm.parse_assembly(ir)
    mod.triple = llvm.get_process_triple()
    mod.data_layout = str(tm.target_data)
    reg = form.split()[0]                         # "zmm" or "ymm"
    lines = [ln for ln in tm.emit_assembly(mod).splitlines() if instruction in ln]
    assert len(lines) == CHAINS and all(f"%{reg}" in ln for ln in lines)
