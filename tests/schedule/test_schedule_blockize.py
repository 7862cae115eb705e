from kernels import CHAIN, HEAD, MATMUL, row_reduction
from sched_util import body_text, check_result, check_scheduled, refused, sched


def test_blockize_tile_of_elementwise():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 4])
    outer = sch.blockize(i1)
    assert outer.name == "B_o"
    text = body_text(sch)
    assert 'with T.block("B_o"):' in text
    assert "vi_o = T.axis.spatial(4, i_0)" in text
    assert "T.reads(A[vi_o * 4:vi_o * 4 + 4, 0:8])" in text
    assert "B[vi_o * 4 + vi_i, vj_i] = A[vi_o * 4 + vi_i, vj_i] * T.float32(2)" in text
    assert [b.name for b in sch.get_child_blocks(outer)] == ["B"]
    check_scheduled(sch)


def test_blockize_reduction_moves_init_outside():
    sch = sched(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.blockize(j)
    text = body_text(sch)
    assert "vk_o = T.axis.reduce(1, 0)" in text
    assert 'with T.block("C_init"):' in text
    assert "T.reads(C[vi_o, vj_i], A[vi_o, vk_i], B[vk_i, vj_i])" in text
    check_scheduled(sch)


def test_blockize_of_several_blocks():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    with refused("blockize/several-blocks", "i"):
        sch.blockize(i)


def test_blockize_not_divisible():
    sch = sched(CHAIN)
    i, j = sch.get_loops(sch.get_block("B"))
    f = sch.fuse(i, j)
    a, b = sch.split(f, [None, 12])
    with refused(("blockize/mixed-binding", "blockize/not-divisible")) as e:
        sch.blockize(b)
    assert e.value.node_name == "B"


# -- kernels of the subspace-division tests ---------------------------------------------------

REGROUP = HEAD + '''@T.prim_func
def regroup(A: T.Buffer((128,), "float32"), B: T.Buffer((4, 32), "float32")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi // 32, vi % 32] = A[vi] * T.float32(2)
'''

HALF = HEAD + '''@T.prim_func
def half(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j)
            B[vi, vj] = A[vi, vj] + T.float32(1)
'''

ROWSUM = row_reduction(8, 16)

PAD = HEAD + '''@T.prim_func
def pad(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 12), "float32")):
    for i, j in T.grid(8, 12):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.if_then_else(vj >= 2 and vj < 10 and vj >= 0, A[vi, vj - 2],
                                       T.float32(0))
'''

STRIDED = HEAD + '''@T.prim_func
def strided(A: T.Buffer((4, 128), "float32"), B: T.Buffer((4, 128), "float32")):
    for i, l in T.grid(4, 8):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vl = T.axis.spatial(128, l * 16)
            B[vi, vl] = A[vi, vl] * T.float32(3)
'''

TAIL = HEAD + '''@T.prim_func
def tail(A: T.Buffer((10, 8), "float32"), B: T.Buffer((10, 8), "float32")):
    for i0, i1, j in T.grid(3, 4, 8):
        with T.block("B"):
            vi = T.axis.spatial(10, i0 * 4 + i1)
            vj = T.axis.spatial(8, j)
            T.where(i0 * 4 + i1 < 10)
            B[vi, vj] = A[vi, vj] - T.float32(1)
'''

MATCHED = HEAD + '''@T.prim_func
def matched(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            Bs = T.match_buffer(B[vi, vj], (), offset_factor=1)
            Bs[()] = A[vi, vj] * T.float32(2)
'''

OPAQUE = HEAD + '''@T.prim_func
def opaque(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            T.reads(A[i, j])
            T.writes(B[i, j])
            B[i, j] = A[i, j] + T.float32(5)
'''

SYMBOLIC = HEAD + '''@T.prim_func
def sym(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 16), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i, k in T.grid(n, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
'''


def _blockized(text, pick=lambda sch, loops: loops[-1]):
    sch = sched(text)
    loops = sch.get_loops(sch.get_block("B"))
    before = body_text(sch)
    sch.blockize(pick(sch, loops))
    assert body_text(sch) != before
    return sch, body_text(sch)


def test_blockize_divisions_simplified_with_the_inner_range():
    sch, text = _blockized(REGROUP, lambda sch, loops: sch.split(loops[0], [None, 16])[1])
    assert "vi_o = T.axis.spatial(8, i_0)" in text
    # (vi_o * 16 + vi_i) // 32 and % 32, knowing 0 <= vi_i < 16
    assert "B[vi_o // 2, vi_o % 2 * 16 + vi_i] = A[vi_o * 16 + vi_i] * T.float32(2)" in text
    assert "T.writes(B[vi_o // 2, vi_o % 2 * 16:vi_o % 2 * 16 + 16])" in text
    assert "T.reads(A[vi_o * 16:vi_o * 16 + 16])" in text
    check_scheduled(sch)


def test_blockize_outer_extent_is_the_range_of_its_binding():
    sch, text = _blockized(HALF)
    # the loops cover half of vj's domain: one tile of 8, not two
    assert "vj_o = T.axis.spatial(1, 0)" in text
    assert "vj_i = T.axis.spatial(8, j)" in text
    assert "T.writes(B[vi_o, 0:8])" in text
    check_scheduled(sch)


def test_blockize_reduction_without_declared_regions():
    sch, text = _blockized(ROWSUM)
    assert "vk_o = T.axis.reduce(1, 0)" in text
    assert 'with T.block("B_init"):' in text
    # the inner block reads what it writes (the outer reduction), then its own reads
    assert "T.reads(B[vi_o], A[vi_o, vk_i])" in text
    assert "T.reads(A[vi_o, 0:16])" in text
    check_scheduled(sch)


def test_blockize_conditions_rewritten_and_decided_by_the_inner_range():
    sch, text = _blockized(PAD)
    # `vj >= 2` is written `2 <= vj_i`; `vj >= 0` holds for 0 <= vj_i < 12 and goes
    assert "2 <= vj_i and vj_i < 10," in text
    assert ">=" not in text
    assert "T.reads(A[vi_o, -2:10])" in text
    check_scheduled(sch)


def test_blockize_binding_that_is_not_a_fusion_keeps_its_domain():
    sch, text = _blockized(STRIDED)
    assert "vl_i = T.axis.spatial(128, l * 16)" in text
    assert "vl_o = T.axis.spatial(1, 0)" in text
    assert "T.writes(B[vi_o, 0:128])" in text
    check_scheduled(sch)


def test_blockize_predicate_on_outer_loops_moves_to_the_outer_block():
    sch, text = _blockized(TAIL)
    head, inner = text.split('with T.block("B"):')
    assert "vi_o = T.axis.spatial(10, i0 * 4 + i1)" in head
    assert "T.where(i0 * 4 + i1 < 10)" in head and "T.where" not in inner
    check_scheduled(sch)


def test_blockize_predicate_over_both_sides_stays_inside():
    sch, text = _blockized(TAIL, lambda sch, loops: loops[1])
    head, inner = text.split('with T.block("B"):')
    assert "vi_o = T.axis.spatial(3, i0)" in head and "T.where" not in head
    # the outer loop i0 is the outer iterator vi_o inside the new block
    assert "T.where(vi_o * 4 + i1 < 10)" in inner
    check_scheduled(sch)


def test_blockize_predicate_over_an_unbound_outer_loop_is_refused():
    sch = sched(HEAD + '''@T.prim_func
def mixed(A: T.Buffer((12, 8), "float32"), B: T.Buffer((12, 8), "float32")):
    for i0, i1, j in T.grid(3, 4, 8):
        with T.block("B"):
            vi = T.axis.spatial(12, i0 * 4 + i1)
            vj = T.axis.spatial(8, j)
            T.where(i1 + j < 9)
            B[vi, vj] = A[vi, vj] - T.float32(1)
''')
    i0, i1, j = sch.get_loops(sch.get_block("B"))
    with refused("blockize/predicate"):
        sch.blockize(j)


def test_blockize_matched_buffer_regions_name_the_source():
    sch, text = _blockized(MATCHED)
    head = text.split('with T.block("B"):')[0]
    assert "T.writes(B[vi_o, 0:8])" in head and "Bs" not in head
    assert "Bs = T.match_buffer(B[vi_o, vj_i], ()" in text
    check_scheduled(sch)


def test_blockize_opaque_block_regions_relaxed_over_inner_loops():
    sch, text = _blockized(OPAQUE, lambda sch, loops: loops[1])
    head = text.split('with T.block("B"):')[0]
    assert "T.reads(A[i, 0:8])" in head and "T.writes(B[i, 0:8])" in head
    check_scheduled(sch)


def test_blockize_symbolic_extent():
    sch, text = _blockized(SYMBOLIC)
    assert "vi_o = T.axis.spatial(n, i)" in text
    assert "vk_i = T.axis.reduce(16, k)" in text
    check_result(sch)


def test_blockize_init_over_a_reduction_iterator_is_refused():
    sch = sched(HEAD + '''@T.prim_func
def bad(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi, vk] = T.float32(0)
            B[vi, vk] = B[vi, vk] + A[vi, vk]
''')
    i, k = sch.get_loops(sch.get_block("B"))
    with refused("blockize/init"):
        sch.blockize(k)


def test_blockize_trivial_division_drops_unit_inner_iterators():
    sch, text = _blockized(HEAD + '''@T.prim_func
def unit(A: T.Buffer((4, 128, 1), "float32"), B: T.Buffer((4, 128, 1), "float32")):
    for i, l, u in T.grid(4, 8, 1):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vl = T.axis.spatial(128, l * 16)
            vu = T.axis.spatial(1, u)
            B[vi, vl, vu] = A[vi, vl, vu] + T.float32(2)
''', lambda sch, loops: loops[1])
    assert "vu_o = T.axis.spatial(1, 0)" in text and "vu_i" not in text
    assert "vl_i = T.axis.spatial(128, l * 16)" in text
    assert "B[vi_o, vl_i, vu_o] = A[vi_o, vl_i, vu_o] + T.float32(2)" in text
    check_scheduled(sch)


def test_blockize_block_whose_init_holds_a_block():
    sch, text = _blockized(HEAD + '''@T.prim_func
def nested(A: T.Buffer((4, 6, 5), "float32"), B: T.Buffer((4, 6), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            with T.init():
                for j in range(6):
                    with T.block("zero"):
                        vj = T.axis.spatial(6, j)
                        B[vi, vj] = T.float32(0)
            for k, j in T.grid(5, 6):
                with T.block("acc"):
                    vj, vk = T.axis.remap("SR", [j, k])
                    B[vi, vj] = B[vi, vj] + A[vi, vj, vk]
''', lambda sch, loops: loops[0])
    assert "vi_o = T.axis.spatial(1, 0)" in text
    assert 'with T.block("B_init"):' in text and "vi_i_init = T.axis.spatial(4, i)" in text
    check_scheduled(sch)


def test_blockize_keeps_a_constant_outer_offset():
    sch, text = _blockized(HEAD + '''@T.prim_func
def upper(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(16, i + 8)
            B[vi] = A[vi] * T.float32(4)
''')
    assert "vi_o = T.axis.spatial(2, 1)" in text
    assert "B[vi_o * 8 + vi_i] = A[vi_o * 8 + vi_i] * T.float32(4)" in text
    check_scheduled(sch)


def test_blockize_without_unit_iterators():
    sch = sched(HALF)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.blockize(j, preserve_unit_iters=False)
    text = body_text(sch)
    assert "vj_o" not in text and "vi_o = T.axis.spatial(16, i)" in text
    check_scheduled(sch)


def test_blockize_division_over_several_outer_terms_relaxes_to_a_point():
    sch, text = _blockized(HEAD + '''@T.prim_func
def flat(B: T.Buffer((4, 32), "float32"), C: T.Buffer((2, 4, 2, 8), "float32")):
    for i, j, k, l in T.grid(2, 4, 2, 8):
        with T.block("B"):
            vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
            C[vi, vj, vk, vl] = B[(vi * 64 + vj * 16 + vk * 8 + vl) // 32,
                                  (vi * 64 + vj * 16 + vk * 8 + vl) % 32]
''')
    head = text.split('with T.block("B"):')[0]
    assert ("T.reads(B[vi_o * 2 + (vj_o * 16 + vk_o * 8) // 32, (vj_o * 16 + vk_o * 8) % 32:"
            "(vj_o * 16 + vk_o * 8) % 32 + 8])") in head
    check_scheduled(sch)


def test_blockize_init_under_a_predicate_over_reduction_loops_is_refused():
    sch = sched(HEAD + '''@T.prim_func
def tailsum(A: T.Buffer((4, 20), "float32"), B: T.Buffer((4,), "float32")):
    for i, k0, k1 in T.grid(4, 3, 8):
        with T.block("B"):
            T.where(k0 * 8 + k1 < 20)
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(20, k0 * 8 + k1)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
''')
    i, k0, k1 = sch.get_loops(sch.get_block("B"))
    with refused("blockize/init"):
        sch.blockize(k1)


def test_blockize_unit_outer_loop_leaves_the_inner_iterator_alone():
    sch = sched(HALF)
    i, j = sch.get_loops(sch.get_block("B"))
    j0, j1 = sch.split(j, [1, 8])
    sch.blockize(j1)
    text = body_text(sch)
    assert "vi_o, vj_o = T.axis.remap(\"SS\", [i, j_0])" in text
    assert "B[vi_o, vj_i] = A[vi_o, vj_i] + T.float32(1)" in text
    check_scheduled(sch)


def test_blockize_symbolic_division_over_a_unit_inner_loop():
    sch, text = _blockized(HEAD + '''@T.prim_func
def symmod(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (4, n), "float32")
    B = T.match_buffer(b, (4, n), "float32")
    for f, u in T.grid(4 * n, 1):
        with T.block("B"):
            vi = T.axis.spatial(4, f // n)
            vj = T.axis.spatial(n, f % n + u)
            B[vi, vj] = A[vi, vj] + T.float32(1)
''')
    assert "vj_o = T.axis.spatial(n, f % n)" in text
    assert "B[vi_o, vj_o] = A[vi_o, vj_o] + T.float32(1)" in text
    check_result(sch)
