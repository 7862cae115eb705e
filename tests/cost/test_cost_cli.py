"""`tirkit cost collect | train | eval | predict` end to end on a tiny dataset."""
import re
import subprocess
import sys

import pytest

from conftest import server_env
from tirkit.cost import dataset
from tirkit.cost.features import NAMES, VERSION

pytest.importorskip("xgboost")

KERNELS = '''from tvm.script import tir as T


@T.prim_func
def add_one(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def rowsum(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
    for i, k in T.grid(64, 64):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def gpu_double(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(1024, bx * 128 + tx)
                B[vi] = A[vi] * T.float32(2)
'''


def tirkit(*args, tmp_path):
    env = dict(server_env(), TIRKIT_CACHE_DIR=str(tmp_path / "kernels"),
               XDG_DATA_HOME=str(tmp_path / "share"))
    return subprocess.run([sys.executable, "-m", "tirkit.cli", *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_collect_train_eval_predict(tmp_path):
    data = tmp_path / "d.jsonl"
    r = tirkit("cost", "collect", str(data), "--workloads", "rowsum_256,colsum_512",
               "--per-workload", "4", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    recs = dataset.read(data)
    assert dataset.counts(data) == {"rowsum_256": 4, "colsum_512": 4}
    assert all(x["features_version"] == VERSION and len(x["features"][0]) == len(NAMES)
               for x in recs)
    r = tirkit("cost", "train", str(data), "--rounds", "20", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.match(r"trained on 8 kernels of 2 workloads in [\d.]+ s \(ensemble, machine .+\): "
                    r".*cost_model\.json\.gz", r.stdout)
    assert (tmp_path / "share" / "tirkit" / "cost_model.json.gz").exists()
    r = tirkit("cost", "eval", str(data), "--holdout", "colsum_512", "--rounds", "20",
               tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    m = re.search(r"top-1 ([\d.]+)  top-5 ([\d.]+)  Spearman (-?[\d.]+)", r.stdout)
    assert m and 0 < float(m.group(1)) <= 1 and float(m.group(2)) == 1.0   # 4 kernels: top-5 all
    src = tmp_path / "k.py"
    src.write_text(KERNELS)
    r = tirkit("cost", "predict", str(src), tmp_path=tmp_path)       # the user's model
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["add_one", "rowsum", "gpu_double"]
    assert all(re.fullmatch(r"\w+: predicted [\d.]+ (s|ms|µs|ns)", ln) for ln in lines[:2])
    # the model predicts CPU kernels; a GPU kernel says so instead of a CPU time
    assert lines[2] == "gpu_double: no prediction (a GPU kernel: the model predicts CPU kernels)"


def test_unknown_workload_and_missing_file(tmp_path):
    r = tirkit("cost", "collect", str(tmp_path / "d.jsonl"), "--workloads", "nope",
               tmp_path=tmp_path)
    assert r.returncode == 2 and "unknown workload(s) nope" in r.stderr
    r = tirkit("cost", "train", str(tmp_path / "missing.jsonl"), tmp_path=tmp_path)
    assert r.returncode == 2 and "missing.jsonl" in r.stderr
    r = tirkit("cost", "collect", "--list", tmp_path=tmp_path)
    from tirkit.cost.workloads import WORKLOADS
    assert r.returncode == 0 and r.stdout.split() == list(WORKLOADS) and len(WORKLOADS) == 99
    r = tirkit("cost", "collect", tmp_path=tmp_path)
    assert r.returncode == 2 and "a dataset file is needed" in r.stderr


def test_predict_without_xgboost(tmp_path):
    """A model file of version 2 predicts without xgboost; one of version 1, whose trees only
    xgboost reads, says what to install."""
    import gzip
    import json
    from tirkit.cost.model import DEFAULT_PATH
    doc = json.loads(gzip.decompress(open(DEFAULT_PATH, "rb").read()))
    assert doc["version"] == 2 and doc["forest"]
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps({k: v for k, v in dict(doc, version=1).items() if k != "forest"}))
    src = tmp_path / "k.py"
    src.write_text(KERNELS)
    blocked = ("import sys; sys.modules['xgboost'] = None\n"       # import xgboost fails
               "from tirkit.cli import main\nsys.argv[0] = 'tirkit'\nsys.exit(main())")
    env = dict(server_env(), XDG_DATA_HOME=str(tmp_path / "share"))

    def predict(model):
        return subprocess.run([sys.executable, "-c", blocked, "cost", "predict", "--model",
                               str(model), str(src)], env=env, capture_output=True, text=True,
                              timeout=300)
    r = predict(DEFAULT_PATH)
    assert r.returncode == 0, r.stderr
    assert [ln.split(":")[0] for ln in r.stdout.splitlines()] == ["add_one", "rowsum",
                                                                  "gpu_double"]
    assert all(re.fullmatch(r"\w+: predicted [\d.]+ (s|ms|µs|ns)", ln)
               for ln in r.stdout.splitlines()[:2])
    r = predict(v1)
    assert r.returncode == 2 and r.stdout == ""
    assert "needs xgboost" in r.stderr and "pip install 'tirkit[cost]'" in r.stderr
    assert "Traceback" not in r.stderr


BROKEN = '''from tvm.script import tir as T


@T.prim_func
def unreadable(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16)):
        B[i] = A[i] * 2.0


@T.prim_func
def undefined(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = Q[i] * 2.0
'''


def test_predict_file_with_errors(tmp_path):
    """A file with errors: they are printed, its sound kernels are still predicted, the
    kernels that hold errors say so, and the exit status is 1."""
    from tirkit.cost.model import DEFAULT_PATH
    src = tmp_path / "k.py"
    src.write_text(BROKEN + KERNELS.split("\n", 1)[1])
    r = tirkit("cost", "predict", "--model", str(DEFAULT_PATH), str(src), tmp_path=tmp_path)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "undefined: no prediction (the kernel has errors)"
    assert [ln.split(":")[0] for ln in lines[1:]] == ["add_one", "rowsum", "gpu_double"]
    assert all(re.fullmatch(r"\w+: predicted [\d.]+ (s|ms|µs|ns)", ln) for ln in lines[1:3])
    assert re.search(r"k\.py:6:23: error: .*\[syntax\]", r.stderr)
    assert re.search(r"k\.py:13:16: error: name 'Q' is not defined", r.stderr)
    assert "Traceback" not in r.stderr
    only = tmp_path / "only.py"               # nothing readable: the errors, status 1
    only.write_text(BROKEN.split("@T.prim_func\ndef undefined")[0])
    r = tirkit("cost", "predict", "--model", str(DEFAULT_PATH), str(only), tmp_path=tmp_path)
    assert r.returncode == 1 and r.stdout == "" and "[syntax]" in r.stderr


def test_predict_leaves_a_kernel_that_calls_module_functions_out(tmp_path):
    """The features read a kernel's own statements: a kernel whose work is in the functions it
    calls gets no prediction rather than one of its loop alone; its callee gets one."""
    from call_texts import SIZED
    src = tmp_path / "calls.py"
    src.write_text(SIZED.format(second=8))
    r = tirkit("cost", "predict", str(src), tmp_path=tmp_path)       # the shipped model
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "main: no prediction (it calls functions of its module, whose work the " \
        "cost features do not read)"
    assert re.fullmatch(r"row_sum: predicted [\d.]+ (s|ms|µs|ns)", lines[1]), lines
