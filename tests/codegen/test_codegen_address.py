"""Element addresses split into a canonical variable part and a constant
(codegen/llvm/address.py): two accesses of one buffer that differ by a constant share their
variable part, so LLVM tells them apart and keeps register-blocked accumulators in
registers."""
import re
import sys
from pathlib import Path

import llvmlite.binding as llvm

import tirkit
from tirkit.arith.linear import linear_form
from tirkit.codegen import emit_llvm
from tirkit.codegen.llvm import engine
from tirkit.codegen.llvm.address import split_offset
from tirkit.codegen.llvm.pipeline import choose
from tirkit.ir import expr as E
from tirkit.ir.equality import structural_equal
from tirkit.tensorize import load

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from tensorize_conv import conv_script  # noqa: E402


LABEL = re.compile(r'^("[^"]+"|[\w.$-]+):')


def _v(name):
    return E.Var(name, "int32")


def _i(x):
    return E.IntImm("int32", x)


def test_split_offset_keeps_the_value_and_separates_the_constant():
    c, h, w = _v("c"), _v("h"), _v("w")
    # (c * 2 + 1) * 16 + (h * 56 + w) * 64, as the flattening of Y[h, w, (2c + 1) * 16] reads
    e = E.Add(E.Mul(E.Add(E.Mul(c, _i(2), "int32"), _i(1), "int32"), _i(16), "int32"),
              E.Mul(E.Add(E.Mul(h, _i(56), "int32"), w, "int32"), _i(64), "int32"), "int32")
    var, const = split_offset(e)
    assert const == 16
    assert linear_form(var) + const == linear_form(e)
    # the same element block at c * 32: the same variable part, another constant
    f = E.Add(E.Mul(w, _i(64), "int32"), E.Add(E.Mul(c, _i(32), "int32"),
                                              E.Mul(h, _i(3584), "int32"), "int32"), "int32")
    var2, const2 = split_offset(f)
    assert const2 == 0 and structural_equal(var, var2)


def test_split_offset_leaves_other_indices_alone():
    c = _v("c")
    assert split_offset(_i(5)) is None
    assert split_offset(E.FloorDiv(c, _i(4), "int32")) is None
    assert split_offset(E.Mul(c, c, "int32")) is None


def _blocks(ir_text):
    """The basic blocks of the optimized IR, as lists of instruction lines."""
    out, cur = [], []
    for line in ir_text.splitlines():
        if LABEL.match(line) or line.startswith(("define", "}")):
            out.append(cur)
            cur = []
        else:
            cur.append(line)
    out.append(cur)
    return [b for b in out if b]


def _direct_schedule(sch, intrin):
    """The conv tiled as 4 pixels x 2 of its 4 output-channel vectors (the second at
    `(co_0 * 2 + 1) * 16`), accumulating straight into Y (no local copy)."""
    b = sch.get_block("conv")
    n, h, w, co, rh, rw, ci = sch.get_loops(b)
    co0, co1 = sch.split(co, [None, 16])
    ci0, ci1 = sch.split(ci, [None, 4])
    wo, wi = sch.split(w, [None, 4])
    coa, cob = sch.split(co0, [None, 2])
    sch.reorder(n, h, coa, wo, rh, rw, ci0, wi, cob, co1, ci1)
    ob = sch.blockize(co1)
    sch.tensorize(ob, intrin.name)
    sch.decompose_reduction(ob, rh)
    sch.unroll(wi)
    sch.unroll(cob)


def test_register_blocked_accumulators_stay_in_registers():
    """No block that runs `vpdpbusd` stores an accumulator: LICM keeps all 8 in registers
    across the reduction loops.  Only LLVM's optimizer runs (no machine code), so any host
    checks it."""
    intrin = load().get("x86.vnni.dot_16x4_u8s8s32")
    mod = tirkit.parse(conv_script(4, 8, 16, 64)).module
    sch = tirkit.Schedule(mod)
    _direct_schedule(sch, intrin)
    func = sch.mod["conv"]
    pipeline = choose(func)
    engine.init()
    tm = engine.target_machine()
    m = llvm.parse_assembly(emit_llvm(func, sch.mod, pipeline))
    m.triple = llvm.get_process_triple()
    m.data_layout = str(tm.target_data)
    engine.optimize(m, tm, pipeline)
    blocks = [b for b in _blocks(str(m)) if any("vpdpbusd" in x for x in b)]
    assert blocks
    for b in blocks:
        assert not any("store <16 x i32>" in x for x in b)
    assert sum(x.count("vpdpbusd.512(") for b in blocks for x in b) >= 8
