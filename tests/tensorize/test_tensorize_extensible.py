"""A new instruction is one more file: the mapping, the quick fix, the CLI and the
interpreter use an invented 8x2 dot product from a temporary folder, with no code change."""
import subprocess
import sys

import numpy as np

import tirkit
from tirkit import codegen
from tirkit.codegen.interp import run_reference
from tirkit.schedule.actions import apply_action, quick_fixes
from tirkit.tensorize import find_mapping, load
from tirkit.tensorize.library import ENV, desc_semantics

import invented
from util import gemm


def test_invented_intrinsic_maps_fixes_and_runs(tmp_path, monkeypatch):
    d = invented.write(tmp_path)
    lib = load([d])
    assert lib.errors == [] and lib.get(invented.NAME).available_on("llvm")
    text = gemm(12, 16, 10, a="int8")
    res = tirkit.parse(text, "g.py")
    r = tirkit.Schedule(res.module).get(tirkit.Schedule(res.module).get_block("C"))
    m = find_mapping(r, lib.get(invented.NAME))
    assert m.feasible and m.extents == [8, 2] and m.padded == []
    # without the folder nothing serves an s8·s8 block; with it, the hint and its fix
    assert not [x for x in tirkit.check(text) if x.code == "tensorize/available"]
    given = [x for x in tirkit.check(text, intrinsics=[d]) if x.code == "tensorize/available"]
    assert [(h.severity, h.span.line) for h in given] == [("hint", 12)]
    assert not [x for x in tirkit.check(text) if x.code == "tensorize/available"]   # not kept
    monkeypatch.setenv(ENV, d)
    hints = [x for x in tirkit.check(text) if x.code == "tensorize/available"]
    assert [(h.severity, h.span.line) for h in hints] == [("hint", 12)]
    assert "invented 8x2 dot" in hints[0].message
    fixes = quick_fixes(res, hints[0], intrinsics=[d])
    assert [f.title for f in fixes] == ["Tensorize block 'C' with invented 8x2 dot (s8·s8→s32)"]
    new, python = apply_action(res, fixes[0])
    assert "sch.tensorize(" in python and "T.unroll(8)" in new
    assert [x for x in tirkit.check(new) if x.severity == "error"] == []
    mod = tirkit.parse(new).module
    f = mod["gemm"]
    outer = tirkit.Schedule(mod).get(tirkit.Schedule(mod).get_block("C_o"))
    assert desc_semantics(outer, [d]) is not None          # the interpreter runs the desc
    rng = np.random.default_rng(3)
    A = rng.integers(-128, 128, (12, 10)).astype("int8")
    B = rng.integers(-128, 128, (10, 16)).astype("int8")
    ref = A.astype(np.int64) @ B.astype(np.int64)
    C = np.zeros((12, 16), "int32")
    codegen.build(f, mod)(A, B, C)
    assert np.array_equal(C, ref)
    C2 = np.zeros((12, 16), "int32")
    run_reference(f, [A, B, C2], module=mod)
    assert np.array_equal(C2, ref)


def test_cli_uses_the_folder(tmp_path):
    d = invented.write(tmp_path / "intr" if (tmp_path / "intr").mkdir() is None else tmp_path)
    src = tmp_path / "g.py"
    src.write_text(gemm(8, 8, 4, a="int8"))
    exe = [sys.executable, "-m", "tirkit.cli"]
    r = subprocess.run(exe + ["tensorize", str(src), "--block", "C"], capture_output=True,
                       text=True)
    assert r.returncode == 1 and "(dtype)" in r.stderr
    r = subprocess.run(exe + ["tensorize", str(src), "--block", "C", "--intrinsics", d,
                              "--write"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "sch.tensorize(block_or_loop=" in r.stderr
    assert "T.match_buffer(" in src.read_text()
    r = subprocess.run(exe + ["check", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_check_reads_the_project_files_intrinsics(tmp_path):
    """`intrinsics = [...]` in tirkit.toml adds the folder for `tirkit check`."""
    (tmp_path / "intrin").mkdir()
    invented.write(tmp_path / "intrin")
    src = tmp_path / "g.py"
    src.write_text(gemm(12, 16, 10, a="int8"))
    exe = [sys.executable, "-m", "tirkit.cli", "check", str(src)]
    r = subprocess.run(exe, capture_output=True, text=True, cwd=tmp_path)
    assert "tensorize/available" not in r.stdout, r.stdout
    (tmp_path / "tirkit.toml").write_text('intrinsics = ["intrin/"]\n')
    r = subprocess.run(exe, capture_output=True, text=True, cwd=tmp_path)
    assert "tensorize/available" in r.stdout and "invented 8x2 dot" in r.stdout, r.stdout
