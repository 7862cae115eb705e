"""The ptx-operands rule: PTX warp instructions whose configuration PTX does not have, whose
register buffers hold another type than the call reads, or whose operands run past their
storage, reported while the user types (type/mismatch, bounds/out-of-bounds), and the legal
calls it leaves alone."""
import pytest

import tirkit

MMA = '''from tvm.script import tir as T


@T.prim_func
def mma(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 8), "float16"),
        C: T.Buffer((16, 8), "float32")):
    a = T.alloc_buffer((8,), "{at}", scope="local")
    b = T.alloc_buffer((4,), "float16", scope="local")
    c = T.alloc_buffer(({nc},), "float32", scope="local")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(8):
            a[i] = A[tx // 4 + i // 2 % 2 * 8, tx % 4 * 2 + i % 2 + i // 4 * 8]
        for i in range(4):
            b[i] = B[tx % 4 * 2 + i % 2 + i // 2 * 8, tx // 4]
        for i in range(4):
            c[i] = T.float32(0)
        for k in range({loops}):
            T.evaluate(T.ptx_mma("{shape}", "row", "{bl}", "{an}", "{bn}", "{cn}", a.data, 0, b.data, 0, c.data, {c_off}, {sat}))
        for i in range(4):
            C[tx // 4 + i // 2 * 8, tx % 4 * 2 + i % 2] = c[i]
'''
CALL_LINE = 18


def mma(at="float16", nc=4, loops=1, shape="m16n8k16", bl="col", an="fp16", bn="fp16",
        cn="fp32", c_off="0", sat="False", call=None):
    text = MMA.format(at=at, nc=nc, loops=loops, shape=shape, bl=bl, an=an, bn=bn, cn=cn,
                      c_off=c_off, sat=sat)
    if call is not None:
        text = text.replace(text.splitlines()[CALL_LINE - 1].strip(), call)
    return tirkit.check(text, "mma.py")


def errors(diags):
    return [(d.span.line, d.code) for d in diags if d.severity == "error"]


def message(diags):
    (d,) = [d for d in diags if d.severity == "error"]
    return d.message


def test_a_legal_mma_is_left_alone():
    assert mma() == []
    assert mma(an="float16", bn="float16", cn="float32") == []   # TVM's other names


@pytest.mark.parametrize("kw, words", [
    ({"cn": "fp99"}, 'type "fp99" is not a PTX type TVM reads'),
    ({"shape": "m16n8"}, 'shape "m16n8" is not one PTX writes'),
    ({"bl": "column"}, 'layout "column" is neither "row" nor "col"'),
    ({"an": "bf16", "bn": "bf16", "cn": "fp16", "at": "bfloat16"},
     "is no PTX mma: bf16 multiplicands accumulate in f32, not f16"),
    ({"bn": "int8"}, "is no PTX mma: multiplicands of types f16 and s8 do not go together"),
    ({"sat": "True"}, "is no PTX mma: saturation is for 4- and 8-bit integer multiplicands"),
    ({"bl": "row"}, "is no PTX mma: its layouts are row.row, but only m8n8k4 with f16"),
    ({"shape": "m16n8k32"}, "is no PTX mma: PTX has no m16n8k32 mma for f16 (its shapes for "
                            "f16: m16n8k16, m16n8k8, m8n8k4)"),
    ({"call": 'T.evaluate(T.ptx_mma("m16n8k16", "row", "col", "fp16", "fp16", "fp32", a.data, '
              '0, b.data, 0, c.data, 0))'}, "takes 13 arguments"),
    ({"sat": "tx == 0"}, "takes saturate as a constant"),
])
def test_an_mma_ptx_does_not_have_is_a_type_mismatch(kw, words):
    d = mma(**kw)
    assert errors(d) == [(CALL_LINE, "type/mismatch")]
    assert message(d).startswith("`T.ptx_mma` ") and words in message(d)


def test_a_register_buffer_of_another_type():
    d = mma(at="float32")
    assert errors(d) == [(CALL_LINE, "type/mismatch")]
    assert "reads A as fp16, but 'a' holds float32" in message(d)


def test_a_diagnostic_underlines_the_argument_it_is_about():
    """The argument as written (`a.data`, the offset `6`), not the whole call: a variable
    used as an argument carries its definition's span, the call keeps its arguments' own."""
    def underlined(diags, kw):
        (d,) = [x for x in diags if x.severity == "error"]
        line = MMA.format(**{**dict(at="float16", nc=4, loops=1, shape="m16n8k16", bl="col",
                                    an="fp16", bn="fp16", cn="fp32", c_off="0",
                                    sat="False"), **kw}).splitlines()[CALL_LINE - 1]
        return line[d.span.column - 1:d.span.end_column - 1], d.span.line
    assert underlined(mma(at="float32"), {"at": "float32"}) == ("a.data", CALL_LINE)
    assert underlined(mma(nc=8, c_off="6"), {"nc": 8, "c_off": "6"}) == ("6", CALL_LINE)
    assert underlined(mma(an="f16x"), {"an": "f16x"}) == ('"f16x"', CALL_LINE)
    assert underlined(mma(sat="tx > 0"), {"sat": "tx > 0"}) == ("tx > 0", CALL_LINE)


def test_registers_past_their_buffer():
    d = mma(nc=8, c_off="6")
    assert errors(d) == [(CALL_LINE, "bounds/out-of-bounds")]
    assert "updates the accumulators 'c'[6:10], past its 8 elements" in d[0].message
    (span, note), = d[0].related
    assert span.line == 9 and note == "'c' holds 8 float32 elements"
    assert mma(nc=8, c_off="4") == []


def test_an_offset_that_moves_with_a_loop_is_read_at_its_extremes():
    assert errors(mma(nc=8, loops=2, c_off="k * 4")) == []
    d = mma(nc=8, loops=3, c_off="k * 4")
    assert errors(d) == [(CALL_LINE, "bounds/out-of-bounds")]
    assert "'c'[8:12]" in d[0].message
    d = mma(nc=8, loops=2, c_off="k * 4 - 4")
    assert errors(d) == [(CALL_LINE, "bounds/out-of-bounds")]
    assert "'c'[-4:0], before its first element" in d[0].message


def test_a_guarded_offset_is_not_reported():
    text = MMA.format(at="float16", nc=8, loops=3, shape="m16n8k16", bl="col", an="fp16",
                      bn="fp16", cn="fp32", c_off="k * 4", sat="False")
    call = text.splitlines()[CALL_LINE - 1]
    guarded = text.replace(call, "            if k < 2:\n    " + call)
    assert errors(tirkit.check(guarded, "mma.py")) == []


@pytest.mark.parametrize("words", [
    ("m8n8k4", "row", "col", "fp16", "fp16", "fp32"),       # PTX has it, not generated
    ("m16n8k8", "row", "col", "tf32", "tf32", "fp32"),
    ("m8n8k32", "row", "col", "int4", "uint4", "int32"),
    ("m16n8k256", "row", "col", "int1", "int1", "int32"),
    ("m16n8k32", "row", "col", "e4m3", "e5m2", "fp32"),
])
def test_configurations_ptx_has_pass_the_rule(words):
    call = ('T.evaluate(T.ptx_mma("{}", "{}", "{}", "{}", "{}", "{}", x.data, 0, x.data, 0, '
            'x.data, 0, False{}))').format(*words, ', "xor"' if words[3] == "int1" else "")
    text = ('from tvm.script import tir as T\n\n\n@T.prim_func\ndef k():\n'
            '    x = T.alloc_buffer((64,), "int32", scope="local")\n'
            '    for tx in T.thread_binding(32, thread="threadIdx.x"):\n'
            f'        {call}\n')
    # the registers' types are not what this rule reads here: only the configuration
    assert [d for d in tirkit.check(text, "k.py") if "is no PTX mma" in d.message or
            "not a PTX type" in d.message] == []


LDMATRIX = '''from tvm.script import tir as T


@T.prim_func
def ldm(A: T.Buffer((16, 16), "float16")):
    S = T.alloc_buffer((256,), "float16", scope="shared")
    d = T.alloc_buffer(({nd},), "{dt}", scope="local")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(8):
            S[tx * 8 + i] = A[tx // 2, tx % 2 * 8 + i]
        T.evaluate(T.ptx_ldmatrix(False, {num}, "{kind}", d.data, {d_off}, S.data, {s_off}, dtype="float16"))
'''


def ldmatrix(nd=8, dt="float16", num=4, kind=".b16", d_off="0", s_off="tx * 8",
             scope="shared"):
    return tirkit.check(LDMATRIX.format(nd=nd, dt=dt, num=num, kind=kind, d_off=d_off,
                                        s_off=s_off).replace('scope="shared"',
                                                             f'scope="{scope}"'), "ldm.py")


def test_ldmatrix():
    assert ldmatrix() == [] and ldmatrix(scope="shared.dyn") == []
    assert ldmatrix(num=2, nd=4) == []
    assert ldmatrix(num=2, nd=4, s_off="tx * 8 + 128") == []   # lanes 16-31 give no row
    for kw, code, words in [
            ({"num": 3}, "type/mismatch", "loads 1, 2 or 4 matrices, not 3"),
            ({"kind": ".b8"}, "type/mismatch", 'loads ".b16" elements, not ".b8"'),
            ({"dt": "float32"}, "type/mismatch", "but 'd' holds float32"),
            ({"nd": 6}, "bounds/out-of-bounds", "writes 'd'[0:8], past its 6 elements"),
            ({"d_off": "2"}, "bounds/out-of-bounds", "writes 'd'[2:10], past its 8 elements"),
            ({"s_off": "tx * 8 + 8"}, "bounds/out-of-bounds",
             "reads a row 'S'[256:264], past its 256 elements"),
            ({"scope": "global"}, "type/mismatch",
             "reads rows of shared memory, but 'S' is global: the instruction addresses the "
             "shared state space alone")]:
        d = ldmatrix(**kw)
        assert errors(d) == [(11, code)], kw
        assert words in d[0].message, kw


def test_ldmatrix_rows_of_fewer_matrices_are_read_at_the_lanes_that_give_them():
    """x1 takes row addresses from lanes 0-7 and x2 from lanes 0-15 of the warp (PTX ISA,
    ldmatrix): with threadIdx.x of extent 32 the warp's lanes, those lanes' rows are
    checked and the others' addresses are not read."""
    assert ldmatrix(num=1, nd=2, s_off="tx * 8 + 192") == []        # lane 7: [248:256]
    d = ldmatrix(num=1, nd=2, s_off="tx * 8 + 200")
    assert errors(d) == [(11, "bounds/out-of-bounds")]
    assert "reads a row 'S'[256:264], past its 256 elements" in message(d)
    assert ldmatrix(num=2, nd=4, s_off="tx % 16 * 16") == []
    d = ldmatrix(num=2, nd=4, s_off="tx % 16 * 16 + 16")
    assert errors(d) == [(11, "bounds/out-of-bounds")]
    assert "reads a row 'S'[256:264], past its 256 elements" in message(d)
    d = ldmatrix(num=1, nd=2, s_off="tx * 8 - 8")
    assert "reads a row 'S'[-8:0], before its first element" in message(d)
    # a block of 64 threads holds two warps; lane = threadIdx.x % 32 is left unchecked
    wide = LDMATRIX.replace("T.thread_binding(32", "T.thread_binding(64").replace(
        "(256,)", "(512,)").replace("(16, 16)", "(32, 16)")
    text = wide.format(nd=2, dt="float16", num=1, kind=".b16", d_off="0",
                       s_off="tx * 8 + 400")
    assert errors(tirkit.check(text, "ldm.py")) == []


def test_ldmatrix_rows_at_a_remainder_and_a_swizzle_of_the_lane():
    """Offsets with `%` and XOR are read at every lane (arith/enumerate.py): the first one
    plus 8 starts lane 31's row at 248 + 8 = 256; with `tx % 8 // 2`, lane 15's swizzled row
    starts at 15 * 16 + (0 ^ 3) * 8 = 264."""
    row = "16 * (tx % 16) + 8 * (tx // 16)"
    assert ldmatrix(s_off=row) == []
    d = ldmatrix(s_off=row + " + 8")
    assert errors(d) == [(11, "bounds/out-of-bounds")]
    assert "reads a row 'S'[256:264], past its 256 elements" in message(d)
    swizzle = "tx % 16 * 16 + T.bitwise_xor(tx // 16, tx % 8 // 4) * 8"
    assert ldmatrix(s_off=swizzle) == []
    d = ldmatrix(s_off=swizzle.replace("tx % 8 // 4", "tx % 8 // 2"))
    assert errors(d) == [(11, "bounds/out-of-bounds")]
    assert "reads a row 'S'[264:272], past its 256 elements" in message(d)


COPY = '''from tvm.script import tir as T


@T.prim_func
def copy(A: T.Buffer((512,), "float32"), B: T.Buffer((512,), "float32")):
    S = T.alloc_buffer(({ns},), "float32", scope="shared")
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        {call}
        T.evaluate(T.ptx_commit_group())
        T.evaluate(T.ptx_wait_group(0))
        B[tx * 4] = S[tx * 4]
'''


def copy(call, ns=512):
    return tirkit.check(COPY.format(ns=ns, call=call), "copy.py")


def test_cp_async():
    keyword = "T.evaluate(T.ptx_cp_async(S.data, tx * 4, A.data, tx * 4, {}, dtype=\"float32\"))"
    first = "T.evaluate(T.ptx_cp_async(\"float32\", S.data, tx * 4, A.data, tx * 4, {}))"
    assert copy(keyword.format(16)) == [] and copy(first.format(16)) == []
    for call in (keyword, first):
        d = copy(call.format(12))
        assert errors(d) == [(8, "type/mismatch")]
        assert "copies 4, 8 or 16 bytes, not 12" in d[0].message
    d = copy(keyword.format(16), ns=510)
    assert errors(d) == [(8, "bounds/out-of-bounds")]
    assert "writes 'S'[508:512], past its 510 elements" in d[0].message
    d = copy(keyword.replace("A.data, tx * 4", "A.data, tx * 4 + 4").format(16))
    assert errors(d) == [(8, "bounds/out-of-bounds")]
    assert "reads 'A'[512:516], past its 512 elements" in d[0].message
    d = copy(keyword.replace("S.data, tx * 4, A.data", "B.data, tx * 4, A.data").format(16))
    (at8,) = [x for x in d if x.span.line == 8]       # (nothing copies into S now: line 11)
    assert at8.code == "type/mismatch"
    assert "writes shared memory, but 'B' is global" in at8.message
    d = copy(keyword.replace("S.data, tx * 4, A.data, tx * 4", "S.data, tx * 4, S.data, 0")
             .format(16))
    (at8,) = [x for x in d if x.span.line == 8]
    assert at8.code == "type/mismatch"
    assert "reads global memory, but 'S' is shared" in at8.message
    d = copy(keyword.replace('"float32"', '"float64"').format(4))
    assert errors(d) == [(8, "type/mismatch")]
    assert "copies whole float64 elements, but 4 bytes are not" in d[0].message


def test_tirx_spellings():
    text = MMA.format(at="float16", nc=4, loops=1, shape="m16n8k16", bl="col", an="fp16",
                      bn="fp99", cn="fp32", c_off="0", sat="False")
    text = text.replace("import tir as T", "import tirx as T").replace(
        "T.ptx_mma(", "T.ptx_legacy.mma(")
    d = tirkit.check(text, "mma.py")
    assert errors(d) == [(CALL_LINE, "type/mismatch")]
    assert d[0].message.startswith("`T.ptx_legacy.mma` type \"fp99\"")
    text = COPY.format(ns=512, call='T.s_tir.cp_async_raw("float32", S.data, '
                       'tx * 4 + 3, A.data, tx * 4, 8)').replace("import tir as T", "import tirx as T")
    d = tirkit.check(text, "copy.py")
    assert errors(d) == [(8, "bounds/out-of-bounds")]
    assert "writes 'S'[511:513], past its 512 elements" in d[0].message
