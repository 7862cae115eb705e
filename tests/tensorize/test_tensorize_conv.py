"""The register-blocked conv2d schedules of benchmarks/tensorize_conv.py on a small conv
(NHWC 1x4x8x16 -> 32, 3x3, padding 1), with the best intrinsic this CPU has: both (weights
pre-packed, and HWIO weights packed by auto_tensorize) compile and match numpy exactly."""
import sys
from pathlib import Path

import numpy as np
import pytest

import tirkit
from tirkit import codegen

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import host_intrinsics  # noqa: E402
from tensorize_conv import (best_intrinsic, conv_script, intrinsic_tile,  # noqa: E402
                            pack_weights, reference, schedule_hwio, schedule_packed)

H, W, CI, CO = 4, 8, 16, 32


@pytest.mark.parametrize("packed", [True, False])
def test_conv_schedule_matches_numpy(packed):
    if not host_intrinsics.available():
        pytest.skip("this CPU has no u8·s8 dot-product intrinsic")
    hwio = tirkit.parse(conv_script(H, W, CI, CO, packed=False)).module
    intrin = best_intrinsic(hwio)
    assert intrin.name == host_intrinsics.best().name
    lanes, k = intrinsic_tile(intrin)
    assert (lanes, k) == (host_intrinsics.best().lane, 4)
    mod = tirkit.parse(conv_script(H, W, CI, CO, lanes, packed=packed)).module if packed \
        else hwio
    sch = tirkit.Schedule(mod)
    (schedule_packed if packed else schedule_hwio)(sch, intrin, wb=4, cb=2)
    assert [d for d in tirkit.check(sch.script()) if d.severity == "error"] == []
    rng = np.random.default_rng(7)
    top = 128 if intrin.caveat else 256          # vpmaddubsw forms: pair sums within s16
    x = rng.integers(0, top, (1, H, W, CI)).astype("uint8")
    w = rng.integers(-128, 128, (3, 3, CI, CO)).astype("int8")
    y = np.zeros((1, H, W, CO), "int32")
    codegen.build(sch.mod["conv"], sch.mod)(x, pack_weights(w, lanes) if packed else w, y)
    assert np.array_equal(y, reference(x, w))
