"""TVM 0.27 compiles the same scripts: its results and ours agree."""
import numpy as np
import pytest

import tirkit
from tirkit.codegen import build
from tirkit.codegen.cli import compare, make_inputs
from tirkit.codegen.llvm.engine import host_target

from codegen_helpers import EXAMPLES

pytestmark = pytest.mark.oracle

CASES = [("matmul.py", "matmul"), ("scheduled_matmul_cpu.py", "matmul_tiled"),
         ("softmax.py", "softmax"), ("matmul_u8s8s32.py", "matmul_u8s8s32"),
         ("const_bias.py", "add_bias")]


def _tvm_source(text):
    """The script in TVM 0.27's spelling, import lines dropped."""
    lines = [ln for ln in text.splitlines() if not ln.startswith("from tvm.script import")]
    out = "\n".join(lines).replace("T.block(", "T.sblock(")
    out = out.replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n")
    return out[out.index("@T.prim_func"):]


@pytest.mark.parametrize("fname,name", CASES, ids=[c[1] for c in CASES])
def test_same_results_as_tvm(fname, name):
    import tvm
    path = EXAMPLES / "valid" / fname
    text = path.read_text()
    module = tirkit.parse(text, str(path)).module
    func = module[name]
    if module.constants is not None and len(module.constants):
        pytest.skip("TVM 0.27 has no T.allocate_const")
    arrays = make_inputs(func, np.random.default_rng(5))
    ours = [a.copy() for a in arrays]
    build(func, module)(*ours)
    ex = tvm.compile(tvm.script.from_source(_tvm_source(text)),
                     target=tvm.target.Target(host_target()))
    theirs = [tvm.runtime.tensor(a) for a in arrays]
    ex[name](*theirs)
    for b, o, t in zip(func.buffer_map, ours, theirs):
        ok, err = compare(o, t.numpy(), b[1].dtype)
        assert ok, (b[1].name, err)
