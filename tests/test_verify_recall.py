"""The errors a second round of rules catches, each on the smallest kernel that shows it,
next to a legal twin that must stay clean; and the noise they no longer make."""
import textwrap

import tirkit

HEAD = "from tvm.script import tir as T\n\n\n"


def check(body, target=None):
    return tirkit.check(HEAD + textwrap.dedent(body), "k.py", target=target)


def codes(diags, severity=("error", "warning")):
    return sorted((d.span.line, d.code) for d in diags if d.severity in severity)


def line_of(body, needle):
    for n, line in enumerate((HEAD + textwrap.dedent(body)).splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(needle)


# ---- 1. overlapping bindings through a thread loop ---------------------------------------
OVERLAP = """
@T.prim_func
def f(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for b in T.thread_binding(4, thread="blockIdx.x"):
        for u in T.unroll(6):
            for t in T.thread_binding(TX, thread="threadIdx.x"):
                with T.block("B"):
                    v = T.axis.spatial(1024, b * 256 + u * 32 + t)
                    B[v] = A[v]
"""


def test_thread_extent_beyond_the_next_stride_is_not_bijective():
    bad = OVERLAP.replace("TX", "64")
    d = check(bad)
    assert codes(d) == [(line_of(bad, "v = T.axis"), "loop-nest/not-bijective")]
    assert "`t` spans 64 values" in d[0].message
    assert codes(check(OVERLAP.replace("TX", "32"))) == []


def test_a_predicate_on_the_lower_digits_removes_the_overlap():
    body = """
    @T.prim_func
    def f(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
        for bx in T.thread_binding(16, thread="blockIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.spatial(4096, bx * 256 + ty * 32 + tx)
                        T.where(ty * 32 + tx < LIMIT)
                        B[vi] = A[vi]
    """
    assert codes(check(body.replace("LIMIT", "256"))) == []
    bad = body.replace("LIMIT", "288")
    assert (line_of(bad, "vi = T.axis"), "loop-nest/not-bijective") in codes(check(bad))


def test_sliding_window_of_serial_loops_stays_legal():
    body = """
    @T.prim_func
    def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for r in range(3):
                with T.block("B"):
                    vi = T.axis.spatial(10, tx + r)
                    B[vi] = A[vi]
    """
    assert codes(check(body)) == []


# ---- 2. an offset index past a guarded tail with a symbolic extent ------------------------
TAIL = """
@T.prim_func
def f(x: T.handle, y: T.handle):
    n = T.int32()
    X = T.match_buffer(x, (n,), "float32")
    Y = T.match_buffer(y, (YN,), "float32")
    for k0 in range((n + 31) // 32):
        for k1 in range(32):
            with T.block("X"):
                T.where(k0 * 32 + k1 < n)
                vk = T.axis.spatial(n, k0 * 32 + k1)
                X[vk] = Y[vk + 2]
"""


def test_offset_past_a_guarded_symbolic_tail_is_out_of_bounds():
    bad = TAIL.replace("YN", "n")
    d = check(bad)
    assert codes(d) == [(line_of(bad, "X[vk] = Y"), "bounds/out-of-bounds")]
    assert "n + 1" in d[0].message
    assert codes(check(TAIL.replace("YN", "n + 2"))) == []


# ---- 3. a cooperative copy that fills part of the tile ------------------------------------
COPY = """
@T.prim_func
def f(A: T.Buffer((256, 64), "float32"), C: T.Buffer((256, 64), "float32")):
    A_shared = T.alloc_buffer((256, 64), "float32", scope="shared")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for f0 in range(STEPS):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(256, bx * 64 + (f0 * 128 + tx) // 64)
                    v1 = T.axis.spatial(64, (f0 * 128 + tx) % 64)
                    A_shared[v0, v1] = A[v0, v1]
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for i in range(32):
                with T.block("C"):
                    vi = T.axis.spatial(256, bx * 64 + (i * 128 + tx) // 64)
                    vj = T.axis.spatial(64, (i * 128 + tx) % 64)
                    C[vi, vj] = A_shared[vi, vj]
"""


def test_cooperative_copy_of_part_of_the_tile():
    bad = COPY.replace("STEPS", "8")          # rows 0-15 of 64
    d = check(bad)
    assert codes(d) == [(line_of(bad, "C[vi, vj] = A_shared"), "thread/cooperative-coverage")]
    assert "64*bx + 15" in d[0].message
    assert codes(check(COPY.replace("STEPS", "32"))) == []


# ---- 4. a warp-level intrinsic issued per thread -------------------------------------------
FILL = """
@T.prim_func
def f(C: T.Buffer((16, 16), "float32")):
    C_frag = T.alloc_buffer((1536, 16), "float32", scope="wmma.accumulator")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for ty in T.thread_binding(2, thread="threadIdx.y"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("fill"):
                    T.reads()
                    T.writes(C_frag[0:1536, 0:16])
                    T.tvm_fill_fragment(C_frag.data, 16, 16, 16, INDEX, T.float32(0))
"""


def test_wmma_operand_that_differs_between_lanes():
    for index in ("tx", "tx % 4 + ty", "tx + 32 * ty"):
        bad = FILL.replace("INDEX", index)
        assert codes(check(bad)) == [(line_of(bad, "T.tvm_fill_fragment"),
                                      "thread/execution-scope")], index
    for index in ("0", "ty", "tx // 32", "tx // 32 + ty * 2"):
        assert codes(check(FILL.replace("INDEX", index))) == [], index
    # 96 fragments of 16x16: `tx + 32 * ty` reaches the last; `tx + 64 * ty` passes it too
    bad = FILL.replace("INDEX", "tx + 64 * ty")
    assert codes(check(bad)) == [(line_of(bad, "T.tvm_fill_fragment"), "bounds/out-of-bounds"),
                                 (line_of(bad, "T.tvm_fill_fragment"), "thread/execution-scope")]


# ---- 5. shared memory allocated outside blocks ----------------------------------------------
DECL = """
@T.prim_func
def f(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            S = T.decl_buffer((SIZE,), "float32", scope="shared")
            S[tx] = A[bx * 128 + tx]
            B[bx * 128 + tx] = S[tx]
"""


def test_decl_buffer_in_shared_is_sized_as_declared():
    bad = DECL.replace("SIZE", "16384")        # 64 KB, never shrunk
    d = check(bad)
    assert codes(d) == [(line_of(bad, "S = T.decl_buffer"), "thread/shared-memory-limit")]
    assert "assumed target cuda-sm80" in d[0].message and "--target" in d[0].message
    assert "shared.dyn" in d[0].message and "163 KB" in d[0].message
    assert codes(check(DECL.replace("SIZE", "8192"))) == []
    huge = DECL.replace("SIZE", "512000")      # 2000 KB: no GPU has that
    d = check(huge)
    assert "every GPU" in d[0].message and "shared.dyn" not in d[0].message
    d = tirkit.check("# tirkit: target=cuda-sm90\n" + HEAD + textwrap.dedent(bad), "k.py")
    assert [x.code for x in d] == ["thread/shared-memory-limit"]
    assert "cuda-sm90 (from the file's" in d[0].message and "227 KB" in d[0].message


def test_allocate_after_launch_thread_is_sized_as_declared():
    body = """
    @T.prim_func
    def f(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        bx = T.launch_thread("blockIdx.x", 8)
        tx = T.launch_thread("threadIdx.x", 128)
        S = T.allocate([SIZE], "float32", "shared")
        S_1 = T.Buffer((SIZE,), data=S, scope="shared")
        S_1[tx] = A[bx * 128 + tx]
        B[bx * 128 + tx] = S_1[tx]
    """
    bad = body.replace("SIZE", "16384")
    assert codes(check(bad)) == [(line_of(bad, "S = T.allocate"), "thread/shared-memory-limit")]
    assert codes(check(body.replace("SIZE", "128"))) == []


# ---- 6. what TVM's compile enforces ---------------------------------------------------------
TILE = """
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("tile"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
            T.writes(B[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
            At = T.match_buffer(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4)AOPT)
            Bt = T.match_buffer(B[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4)BOPT)
            for x, y in T.grid(4, 4):
                Bt[x, y] = At[x, y]
"""


def test_match_buffer_offset_and_strides():
    ok = TILE.replace("AOPT", "").replace("BOPT", ", strides=[16, 1]")
    assert codes(check(ok)) == []
    bad = TILE.replace("AOPT", ", elem_offset=0").replace("BOPT", "")
    d = check(bad)
    assert codes(d) == [(line_of(bad, "At = T.match_buffer"), "signature/match-buffer")]
    assert "moves with" in d[0].message
    bad = TILE.replace("AOPT", "").replace("BOPT", ", strides=[8, 1]")
    assert codes(check(bad)) == [(line_of(bad, "Bt = T.match_buffer"), "signature/match-buffer")]


REDUCE = """
@T.prim_func
def f(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(128):
        for k in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = UPDATE
"""


def test_cross_thread_reduction_needs_a_reducer():
    bad = REDUCE.replace("UPDATE", "B[vi] - A[vi, vk]")
    d = check(bad)
    assert codes(d) == [(line_of(bad, "B[vi] = B[vi] -"), "thread/invalid-reducer")]
    assert d[0].related and d[0].related[0][0].line == line_of(bad, "for k in")
    for ok in ("B[vi] + A[vi, vk]", "T.max(B[vi], A[vi, vk])", "B[vi] * A[vi, vk]"):
        assert codes(check(REDUCE.replace("UPDATE", ok))) == [], ok
    serial = REDUCE.replace('T.thread_binding(128, thread="threadIdx.x")', "range(128)")
    assert codes(check(serial.replace("UPDATE", "B[vi] - A[vi, vk]"))) == []


ARGMAX = """
@T.prim_func
def f(A: T.Buffer((128, 128), "float32"), I: T.Buffer((128,), "int32"),
      V: T.Buffer((128,), "float32")):
    for i in T.thread_binding(128, thread="blockIdx.x"):
        for k in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("R"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    I[vi] = -1
                    V[vi] = T.min_value("float32")
                UPDATE
"""
LETS = """v_i: T.int32 = T.Select(V[vi] >= A[vi, vk], I[vi], vk)
                v_v: T.float32 = T.Select(V[vi] CMP A[vi, vk], V[vi], A[vi, vk])
                I[vi] = v_i
                V[vi] = v_v"""


def test_cross_thread_reduction_of_several_buffers_needs_a_reducer():
    assert codes(check(ARGMAX.replace("UPDATE", LETS.replace("CMP", ">=")))) == []
    # argmax's index beside argmin's value: no reducer's combination
    mixed = ARGMAX.replace("UPDATE", LETS.replace("CMP", "<="))
    d = check(mixed)
    assert codes(d) == [(line_of(mixed, "I[vi] = v_i"), "thread/invalid-reducer")]
    assert "update of `I`, `V`" in d[0].message
    assert d[0].related[0][0].line == line_of(mixed, "for k in")
    # the second store reads the index the first one stored
    sequential = ARGMAX.replace("UPDATE", "I[vi] = T.Select(V[vi] >= A[vi, vk], I[vi], vk)\n"
                                "                V[vi] = T.Select(I[vi] == vk, A[vi, vk], V[vi])")
    assert codes(check(sequential)) == [(line_of(sequential, "I[vi] = T.Select"),
                                         "thread/invalid-reducer")]


PIPELINE = """
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        for i in T.serial(16, annotations={ANN}):
            with T.block():
                T.reads(A[tx, i])
                T.writes(D[tx, i])
                B = T.alloc_buffer((16, 1), scope="shared")
                C = T.alloc_buffer((16, 1), scope="shared")
                with T.block():
                    T.reads(A[tx, i])
                    T.writes(B[tx, 0])
                    B[tx, 0] = A[tx, i] * T.float32(2)
                with T.block():
                    T.reads(B[tx, 0])
                    T.writes(C[tx, 0])
                    C[tx, 0] = B[tx, 0] + T.float32(2)
                with T.block():
                    T.reads(C[tx, 0])
                    T.writes(D[tx, i])
                    D[tx, i] = C[tx, 0] + T.float32(1)
"""


def test_software_pipeline_annotations():
    def ann(stage, order=None):
        a = f'"software_pipeline_stage": {stage}'
        return PIPELINE.replace("ANN", a if order is None else
                                a + f', "software_pipeline_order": {order}')
    assert codes(check(ann([0, 1, 1], [0, 1, 2]))) == []
    assert codes(check(ann([0, 1, 1], [1, 0, 2]))) == []      # stages interleaved
    for bad in (ann([0, 1, 1], [0, 2, 1]),       # the consumer of C before its producer
                ann([0, 1, 1], [0, 1, 1]),       # order 1 twice
                ann([0, 1, 1]),                  # no order
                ann([0, 1], [0, 1]),             # two entries, three statements
                ann([0, 1, 1], [0, 1])):         # lengths differ
        assert codes(check(bad)) == [(line_of(bad, "for i in T.serial"),
                                      "annotation/software-pipeline")], bad


ALIGN = """
@T.prim_func
def f(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            T.block_attr({"buffer_dim_align": ALIGN})
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj]
"""


def test_buffer_dim_align_must_be_well_formed():
    assert codes(check(ALIGN.replace("ALIGN", "[[0, 0, 128, 127]]"))) == []
    for bad in ("[0]", "[[1, 0, 128, 1]]", "[[0, 2, 128, 1]]", "[[0, 0, 0, 0]]",
                "[[0, 0, 32, 32]]"):
        text = ALIGN.replace("ALIGN", bad)
        assert codes(check(text)) == [(line_of(text, 'T.block("B")'),
                                       "annotation/buffer-dim-align")], bad


# ---- 7. declared regions out of bounds ------------------------------------------------------
REGION = """
@T.prim_func
def f(data: T.Buffer((4, 4, 6), "float32"), out: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("sum"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(data[vi, vj, 0:SIX])
            T.writes(out[vi, vj])
            out[vi, vj] = data[vi, vj, 5]
"""


def test_declared_region_wholly_outside_its_buffer():
    bad = REGION.replace("0:SIX", "6")
    d = check(bad)
    assert (line_of(bad, "T.reads"), "signature/region-out-of-bounds") in codes(d)
    assert codes(check(REGION.replace("SIX", "6"))) == []
    # a halo that overlaps the edge, as annotate_buffer_access writes it, is left alone
    halo = REGION.replace("vj, 0:SIX", "vj - 1 : vj + 1, 0:6")
    assert codes(check(halo)) == []


def test_region_out_of_bounds_with_a_thread_index():
    body = """
    @T.prim_func
    def f(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
        A_local = T.alloc_buffer((1, 1, 16), "float32", scope="local")
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            for j in range(16):
                with T.block("load"):
                    vt, vj = T.axis.remap("SS", [tx, j])
                    T.reads(A[vt, vj])
                    T.writes(A_local[IDX, 0, vj])
                    A_local[0, 0, vj] = A[vt, vj]
                with T.block("store"):
                    vt, vj = T.axis.remap("SS", [tx, j])
                    T.reads(A_local[0, 0, vj])
                    T.writes(B[vt, vj])
                    B[vt, vj] = A_local[0, 0, vj]
    """
    bad = body.replace("IDX", "vt")
    assert (line_of(bad, "T.writes(A_local"), "signature/region-out-of-bounds") in \
        codes(check(bad))
    assert codes(check(body.replace("IDX", "0"))) == []


# ---- noise that is gone ---------------------------------------------------------------------
GUARDED_COPY = """
@T.prim_func
def f(A: T.Buffer((20, 20), "float32"), C: T.Buffer((20, 20), "float32")):
    A_shared = T.alloc_buffer((20, 20), "float32", scope="shared")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for f0 in range(4):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(20, (f0 * 128 + tx) // 20)
                    v1 = T.axis.spatial(20, (f0 * 128 + tx) % 20)
                    T.where(f0 * 128 + tx < LIMIT)
                    A_shared[v0, v1] = A[v0, v1]
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for i in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(20, (i * 128 + tx) // 20)
                    vj = T.axis.spatial(20, (i * 128 + tx) % 20)
                    T.where(i * 128 + tx < 400)
                    C[vi, vj] = A_shared[vi, vj]
"""


def test_guarded_cooperative_copy_is_affine():
    # 128 threads do not divide the 20 x 20 tile, but the predicate bounds the fused index
    # by 400, a multiple of 20: TVM's iterator map splits it exactly
    assert codes(check(GUARDED_COPY.replace("LIMIT", "400")),
                 ("error", "warning", "information")) == []
    bad = GUARDED_COPY.replace("LIMIT", "410")
    assert (line_of(bad, "v1 = T.axis"), "loop-nest/non-affine") in codes(check(bad))


def test_one_diagnostic_per_uncovered_buffer_and_line():
    body = """
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        B = T.alloc_buffer((64,))
        for i in range(32):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi]
        for i in range(32):
            with T.block("C"):
                vi = T.axis.spatial(64, i)
                C[vi] = B[vi + 32] + B[vi + 31]
    """
    assert codes(check(body)) == [(line_of(body, "C[vi] = B"), "dataflow/uncovered-read")]


def test_unnamed_block_is_named_by_its_line():
    body = """
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in range(16):
            with T.block():
                vi = T.axis.spatial(8, i)
                A[vi] = T.float32(0)
    """
    d = check(body)
    assert codes(d) == [(line_of(body, "vi = T.axis"), "loop-nest/domain-mismatch")]
    assert f"block at line {line_of(body, 'with T.block()')}" in d[0].message
    assert "''" not in d[0].message


def test_clipped_tail_loop_is_not_read_as_reaching_its_bound():
    # j stops at min(31, 126 - 32 * i): vi reaches 126 at most, though j alone reaches 31
    body = """
    @T.prim_func
    def f(A: T.Buffer((127, 128), "float32"), B: T.Buffer((127, 128), "float32")):
        for i in range(4):
            for j, k in T.grid(T.min(31, 126 - i * 32) + 1, 128):
                with T.block("B"):
                    vi = T.axis.spatial(127, i * 32 + j)
                    vj = T.axis.spatial(128, k)
                    B[vi, vj] = A[vi, vj]
    """
    assert codes(check(body)) == []
    # the same nest without the clip does leave the domain
    bad = body.replace("T.min(31, 126 - i * 32) + 1", "32")
    assert (line_of(bad, "vi = T.axis"), "loop-nest/domain-mismatch") in codes(check(bad))


# ---- never an internal error ----------------------------------------------------------------
def test_attribute_as_a_remap_target_is_a_syntax_error():
    body = """
    @T.prim_func
    def f(A: T.Buffer((16, 16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        for i, j, k in T.grid(16, 16, 16):
            with T.block("C"):
                vi, vj, T.vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + A[vi, vj, 0]
    """
    d = check(body)
    assert [x.code for x in d if x.code == "internal"] == []
    line = line_of(body, "T.axis.remap")
    assert (line, "syntax") in codes(d, ("error",))
    s = next(x for x in d if x.code == "syntax").span
    assert s.column == textwrap.dedent(body).splitlines()[line - 4].index("T.vk") + 1


def test_keyword_in_a_positional_intrinsic_is_a_type_error():
    # `vi = 3` typed for `vi == 3` makes a keyword argument of T.if_then_else
    body = """
    @T.prim_func
    def f(A: T.Buffer((8,), "int32")):
        for i in range(8):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                A[vi] = T.if_then_else(vi = 3, 0, 1, dtype="int32")
    """
    d = check(body)
    assert [x.code for x in d if x.code == "internal"] == []
    assert (line_of(body, "T.if_then_else"), "type/mismatch") in codes(d, ("error",))
    ok = body.replace("vi = 3", "vi == 3")
    assert codes(check(ok)) == []
