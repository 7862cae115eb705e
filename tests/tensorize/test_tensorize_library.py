import textwrap

from tirkit.tensorize import load
from tirkit.tensorize.library import describe_target

from util import AVX2, gemm, schedule


def test_shipped_intrinsics_load_clean():
    lib = load()
    assert lib.errors == []
    assert {"x86.vnni.dot_16x4_u8s8s32", "x86.avxvnni.dot_8x4_u8s8s32",
            "x86.avx512.dot_16x4_u8s8s32", AVX2} <= set(lib.names())
    assert lib.get("dot_16x4_vnni").name == "x86.vnni.dot_16x4_u8s8s32"   # TVM's name


def test_target_features_decide_availability():
    lib = load()
    vnni = lib.get("x86.vnni.dot_16x4_u8s8s32")
    assert vnni.available_on("llvm -mattr=+avx512vnni,+avx512bw")
    assert not vnni.available_on("llvm -mattr=+avx2")
    assert lib.get(AVX2).available_on("llvm -mattr=+avx2,+fma")
    assert not lib.get(AVX2).available_on("cuda-sm80")
    kind, feats = describe_target("llvm")          # this host: features from LLVM
    assert kind == "llvm" and ("+avx2" in feats) == lib.get(AVX2).available_on("llvm")


def test_hover_names_what_a_target_lacks():
    """On an AVX2-only target the hover offers the AVX2 form and says, for each wider
    instruction, which features the target lacks and how it would map."""
    from tirkit.tensorize.suggest import hover_lines
    sch = schedule(gemm(64, 64, 64))
    lines = hover_lines(sch.get(sch.get_block("C")), "llvm -mattr=+avx2,+fma")
    assert lines[0].startswith("- **x86 AVX2 (u8·s8→s32, 8x4)** (`x86.avx2.dot_8x4_u8s8s32`): "
                               "`vj` by 8")
    assert ("- not `x86.vnni.dot_16x4_u8s8s32`: llvm -mattr=+avx2,+fma lacks +avx512vnni "
            "+avx512bw (it would map `vj` by 16") in "\n".join(lines)


def test_broken_file_is_reported_and_others_load(tmp_path):
    (tmp_path / "bad.py").write_text("from tvm.script import tirx as T\n\ndef desc(:\n")
    (tmp_path / "half.py").write_text(textwrap.dedent('''\
        from tvm.script import tirx as T


        @T.prim_func(s_tir=True)
        def desc(A: T.Buffer((4,), "int8")):
            for i in range(4):
                with T.sblock("u"):
                    vi = T.axis.spatial(4, i)
                    A[vi] = A[vi] + T.int8(1)
        '''))
    lib = load([str(tmp_path)])
    bad = {p.rsplit("/", 1)[-1] for p, _ in lib.errors}
    assert bad == {"bad.py", "half.py"}
    assert AVX2 in lib.names()


def test_bounds_rule_accepts_a_whole_buffer_vector_and_reports_an_overrun():
    import tirkit
    head = '''from tvm.script import tir as T


@T.prim_func
def f(B: T.Buffer((8, 4), "int8"), C: T.Buffer((32,), "int8")):
    C[0:32] = B[0, 0:{n}]
'''
    assert [d.code for d in tirkit.check(head.format(n=32))] == []
    assert [d.code for d in tirkit.check(head.format(n=33).replace("(32,)", "(33,)").replace(
        "C[0:32]", "C[0:33]"))] == ["bounds/out-of-bounds"]


def test_host_features_agree_with_llvm():
    from tirkit.codegen.llvm.engine import host_target
    from tirkit.tensorize.library import _CPUINFO, host_features
    llvm = set(host_target()["mattr"])
    for feat in _CPUINFO.values():
        if feat == "+dotprod":
            continue
        assert (feat in host_features()) == (feat in llvm), feat
