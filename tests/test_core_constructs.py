"""Constructs met in real TVMScript programs: each lowers without errors, round-trips, prints
as a fixpoint, and prints in the expected form."""
import pytest

import tirkit

CLASSIC = "from tvm.script import tir as T\n\n\n"
TIRX = "from tvm.script import tirx as T\n\n\n"
MODULE = "from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n\n"

CASES = {
    "handle_param_with_pointer_type": (CLASSIC + '''@T.prim_func
def f(Aptr: T.handle("float16", "shared"), n: T.int32):
    A = T.decl_buffer((n,), "float16", data=Aptr, scope="shared")
    for i in range(n):
        A[i] = T.float16(0)
''', ['Aptr: T.handle("float16", "shared")']),
    "module_function_call": (MODULE + '''@I.ir_module
class Mod:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        Mod.sub(A.data)

    @T.prim_func(private=True)
    def sub(A_data: T.handle("float32")):
        A = T.decl_buffer((4,), data=A_data)
        A[0] = T.float32(1)
''', ["        Mod.sub(A.data)"]),
    "dtype_keywords": (CLASSIC + '''@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
    for i in range(4):
        A[i] = T.exp(A[i], dtype="float32") + T.if_then_else(i < 2, A[i], T.float32(0), dtype="float32")
        B[i] = T.reinterpret(A[i], dtype="int32") + T.cast(A[i], dtype="int32")
''', ['T.reinterpret("int32", A[i])', "T.exp(A[i])"]),
    "launch_thread_twice_and_with_forms": (CLASSIC + '''@T.prim_func
def f(A: T.Buffer((256,), "float32")):
    tx = T.env_thread("threadIdx.x")
    with T.launch_thread(tx, 256):
        A[tx] = A[tx] + T.float32(1)
    with T.launch_thread(tx, 256):
        A[tx] = A[tx] + T.float32(2)
''', ['tx = T.env_thread("threadIdx.x")', "    with T.launch_thread(tx, 256):"]),
    "decl_buffer_without_data_mid_sequence": (CLASSIC + '''@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    with T.decl_buffer((8,), "float32", scope="local") as B:
        for i in range(8):
            B[i] = A[i]
    for i in range(8):
        A[i] = A[i] * T.float32(2)
''', ['    with T.decl_buffer((8,), "float32", scope="local") as B:']),
    "float32_max_keeps_its_bits": (CLASSIC + '''@T.prim_func
def f(A: T.Buffer((1,), "float32")):
    A[0] = T.float32(-3.4028234663852886e+38)
''', ["T.float32(-3.4028234663852886e+38)"]),
    "symbolic_region_and_vector_slices": (CLASSIC + '''@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(16):
        with T.block("copy"):
            vi = T.axis.spatial(16, i)
            T.reads(A[vi * 4:vi * 4 + 4])
            T.writes(B[vi * 4:vi * 4 + 4])
            sub = T.match_buffer(A[vi * 4:vi * 4 + 4], (4,), offset_factor=1)
            B[vi * 4:vi * 4 + 4] = sub[0:4]
''', ["B[vi * 4:vi * 4 + 4] = sub[0:4]"]),
    "shifts_and_constant_folding": (CLASSIC + '''@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    A[0] = A[1] >> 2 << 1
    A[1] = A[2] * (2 * 3) + T.Cast("int32", -T.int64(2147483648))
''', ["A[1] >> 2 << 1", 'A[2] * 6 + T.Cast("int32", T.int64(-2147483648))']),
    "comm_reducer_lambda": (CLASSIC + '''@T.prim_func
def reduce_roundtrip(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
    red = T.allocate([1], "float32", "local")
    tx = T.launch_thread("threadIdx.x", 32)
    with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", T.reinterpret("handle", T.uint64(0))):
        T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), red, tx)
''', ["T.comm_reducer(lambda x, y: x + y, [T.float32(0)])"]),
    "buffer_methods": (CLASSIC + '''@T.prim_func
def f(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (16,), offset_factor=1)
    C = T.match_buffer(c, (16,), offset_factor=1)
    with T.block("root"):
        T.reads(A[0:16])
        T.writes(C[0:16])
        T.evaluate(T.call_extern("int32", "copy", C.access_ptr("w"), A.data, A.elem_offset))
''', ['C.access_ptr("w")', "A.elem_offset"]),
    "match_buffer_order_kept": (CLASSIC + '''@T.prim_func
def f(a: T.handle, b: T.handle):
    B = T.match_buffer(b, (4,))
    A = T.match_buffer(a, (4,))
    for i in range(4):
        B[i] = A[i]
''', ['def f(a: T.handle, B: T.Buffer((4,), "float32")):\n    A = T.match_buffer(a, (4,)']),
    "let_expression_with_where": (CLASSIC + '''@T.prim_func
def f(A: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        x = T.float32()
        A[i, j] = T.Let(T.float32(5) * x, where={x: T.Cast("float32", i + 1)})
''', ["    x = T.float32()\n", 'T.Let(T.float32(5) * x, where={x: T.Cast("float32", i + 1)})']),
    "tirx_alloc_forms_let_and_bind": (TIRX + '''@T.prim_func(s_tir=True)
def f(A: T.Buffer((16,), "float32"), n: T.int64):
    S = T.sblock_alloc_buffer((16,), "float32", scope="shared")
    for i in range(16):
        tmp = T.alloc_buffer((1,), "float32", scope="local")
        k: T.let[T.int64] = T.ceildiv(n, T.int64(2))
        v = T.bind(A[i] * T.float32(2))
        tmp[0] = v
        S[i] = tmp[0]
        A[i] = S[i]
''', ['S = T.sblock_alloc_buffer((16,), "float32", scope="shared")',
      '        tmp = T.alloc_buffer((1,), "float32", scope="local")',
      "k: T.let[T.int64] = T.ceildiv(n, T.int64(2))", "v = T.bind(A[i] * T.float32(2))"]),
    "call_extern_dtype_keyword": ('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    T.evaluate(T.call_extern("call_impl", A.data, dtype=""))
    T.evaluate(T.call_extern("g", A.data, dtype="int32"))
''', ['T.call_extern("void", "call_impl", A.data)', 'T.call_extern("int32", "g", A.data)']),
    "folded_min_max_and_clz": ('''
@T.prim_func
def f(A: T.Buffer((2,), "float32"), B: T.Buffer((4,), "int32")):
    B[0] = T.min(1, 2)
    B[1] = T.max(T.int32(3), 7)
    A[0] = T.min(T.float32(1), T.float32(2))
    for i in range(T.int64(2)):
        B[i + T.int64(2)] = T.clz(i)
''', ["B[0] = 1", "B[1] = 7", "A[0] = T.float32(1)", "B[i + T.int64(2)] = T.clz(i)"]),
    "vscale_is_an_int32": ('''
@T.prim_func
def f(A: T.Buffer((128,), "float32")):
    for i in range(T.vscale() * 4):
        A[i] = A[i] * T.float32(2)
''', ["for i in range(T.vscale() * 4):"]),
    "string_shape_dimension": ('''
@T.prim_func
def f(B: T.Buffer((32, "n", 128), "float32"), C: T.Buffer((32, 1, n), "float32")):
    for i, j in T.grid(32, 128):
        B[i, 0, j] = B[i, 0, j] * T.float32(2)
''', ["n = T.int32()", "(32, n, 128)", "(32, 1, n)"]),
    "zero_dim_regions": ('''
@T.prim_func
def f(A: T.Buffer((), "int32"), C: T.Buffer((), "int32")):
    with T.block("C"):
        T.reads(A[()])
        T.writes(C[()])
        C[()] = A[()] + 1
''', ["T.reads(A[()])", "T.writes(C[()])"]),
    "statement_alloc_buffer_with_annotations": (TIRX + '''@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i in range(16):
        B = T.alloc_buffer((1, 16), "float32", annotations={"buffer_data_alignment": 64})
        for j in range(16):
            B[0, j] = A[i, j] + T.float32(1)
        for j in range(16):
            C[i, j] = B[0, j] * T.float32(2)
''', ['B = T.alloc_buffer((1, 16), "float32", annotations={"buffer_data_alignment": 64})']),
    "grid_into_one_name_then_remap": (CLASSIC + '''@T.prim_func
def f(A: T.Buffer((8, 4), "float32")):
    for iters in T.grid(8, 4):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", iters)
            A[vi, vj] = T.float32(1)
''', ["for iters_0, iters_1 in T.grid(8, 4):",
        'vi, vj = T.axis.remap("SS", [iters_0, iters_1])']),
    "match_buffer_without_shape_takes_the_region": (CLASSIC + '''@T.prim_func
def f(A: T.Buffer((16, 16), "int32")):
    for i, j in T.grid(4, 4):
        with T.block("tile"):
            vi, vj = T.axis.remap("SS", [i, j])
            B = T.match_buffer(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], dtype="float32")
            for k in range(4):
                B[k, k] = 1
''', ['B = T.match_buffer(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4), "int32")']),
    "tuple_index_ramp_store_and_lowercase_buffer": (CLASSIC + '''@T.prim_func
def f(A: T.buffer((2, 2), "float32"), B: T.Buffer((4,), "float32")):
    A[(0, 1)] = T.float32(2)
    B[T.Ramp(0, 1, 4)] = T.Broadcast(A[(0, 1)], 4)
''', ["def f(A: T.Buffer((2, 2), \"float32\"), B: T.Buffer((4,), \"float32\")):",
        "A[0, 1] = T.float32(2)", "B[0:4] = T.Broadcast(A[0, 1], 4)"]),
    "lowercase_ramp_and_broadcast_and_a_top_allocation_with_annotations": (TIRX + '''@T.prim_func
def f(C: T.Buffer((16,), "int32")):
    D = T.alloc_buffer((16,), "int32", annotations={"attr1_key": "attr1_value"})
    D[T.ramp(0, 1, 16)] = T.broadcast(1, 16)
    C[0:16] = D[T.ramp(0, 1, 16)]
''', ["D[0:16] = T.Broadcast(1, 16)", "C[0:16] = D[T.Ramp(0, 1, 16)]",
        'D = T.alloc_buffer((16,), "int32", annotations={"attr1_key": "attr1_value"})']),
    "python_float_is_float32_and_promotes": (TIRX + '''@T.prim_func
def f(A: T.Buffer((4,), "float32"), H: T.Buffer((4,), "float16"), D: T.Buffer((4,), "float64")):
    for i in range(4):
        A[i] = i + 0.5
        H[i] = T.Cast("float16", H[i] + 0.5)
        D[i] = D[i] * 0.5
        H[i] = H[i] + 1
''', ['A[i] = T.Cast("float32", i) + T.float32(0.5)',
        'H[i] = T.Cast("float16", T.Cast("float32", H[i]) + T.float32(0.5))',
        "D[i] = D[i] * T.float64(0.5)", "H[i] = H[i] + T.float16(1)"]),
    # a Python int is an int32 constant: arithmetic and comparisons beside a narrower integer
    # or a bool are done in int32; a bitwise operator or a shift gives it the narrow type
    "python_int_is_int32_beside_a_narrow_integer": (TIRX + '''@T.prim_func
def f(I: T.Buffer((4,), "int8"), U: T.Buffer((4,), "uint16"), L: T.Buffer((4,), "int64"),
      M: T.Buffer((4,), "bool"), B: T.Buffer((4,), "int32")):
    for i in range(4):
        B[i] = I[i] + 1
        B[i] = 3 * U[i]
        B[i] = T.Cast("int32", L[i] - 2)
        B[i] = M[i] + 1
        B[i] = T.max(I[i], 0) + I[i] // 2 + T.floormod(I[i], 3)
        B[i] = T.if_then_else(I[i] < 5, I[i], 1)
        B[i] = T.Cast("int32", I[i] & 1) + T.Cast("int32", I[i] << 1)
''', ['B[i] = T.Cast("int32", I[i]) + 1', 'B[i] = 3 * T.Cast("int32", U[i])',
        'B[i] = T.Cast("int32", L[i] - T.int64(2))', 'B[i] = T.Cast("int32", M[i]) + 1',
        'B[i] = T.max(T.Cast("int32", I[i]), 0) + T.Cast("int32", I[i]) // 2 + '
        'T.Cast("int32", I[i]) % 3',
        'B[i] = T.if_then_else(T.Cast("int32", I[i]) < 5, T.Cast("int32", I[i]), 1)',
        'B[i] = T.Cast("int32", I[i] & T.int8(1)) + T.Cast("int32", I[i] << T.int8(1))']),
    # two T.sblock_attr calls are merged as TVM merges them: dicts under one key key by key,
    # one value given twice kept once
    "block_attr_calls_merge": (TIRX + '''@T.prim_func(s_tir=True)
def f(A: T.Buffer((4,), "float32")):
    with T.sblock():
        T.sblock_attr({"key": {"key1": "block1"}, "x": 1})
        T.sblock_attr({"key": {"key2": "block2"}, "x": 1, "y": 2})
        A[0] = T.float32(1)
''', ['T.sblock_attr({"key": {"key1": "block1", "key2": "block2"}, "x": 1, "y": 2})']),
    # an explicit root block over no other block stays: without it nothing would make one
    "explicit_root_over_plain_statements": (TIRX + '''@T.prim_func(s_tir=True)
def f(A: T.Buffer(1, "int32")):
    with T.sblock("root"):
        A[0] = 0
''', ['    with T.sblock("root"):\n        A[0] = 0']),
    # `T.launch_thread("tag", extent)` would give the variable the extent's int64: an int32
    # thread variable with an int64 extent is declared with T.env_thread
    "int64_thread_extent_of_an_int32_thread": (TIRX + '''@T.prim_func(s_tir=True)
def f(A: T.Buffer((T.int64(64),), "float32"), B: T.Buffer((T.int64(64),), "float32")):
    bx = T.env_thread("blockIdx.x")
    T.launch_thread(bx, T.int64(2))
    tx = T.launch_thread("threadIdx.x", T.int64(32))
    B[T.Cast("int64", bx) * T.int64(32) + tx] = A[T.Cast("int64", bx) * T.int64(32) + tx]
''', ['bx = T.env_thread("blockIdx.x")', "T.launch_thread(bx, T.int64(2))",
       'tx = T.launch_thread("threadIdx.x", T.int64(32))']),
    # a matched buffer on another buffer's data keeps `data=`
    "match_buffer_on_another_buffers_data": (MODULE + '''@I.ir_module
class Mod:
    @T.prim_func
    def f(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (256,), "float32")
        B = T.match_buffer(b, (16, 16), "float32", data=A.data)
        for i in range(16):
            B[i, 0] = A[i]
''', ['B = T.match_buffer(b, (16, 16), "float32", data=A.data)']),
    # T.continue_loop() and `continue` are one statement, as are T.break_loop() and `break`
    "continue_and_break_calls": (TIRX + '''@T.prim_func(s_tir=True)
def f(A: T.Buffer((16,), "int32")):
    for i in range(16):
        if i % 2 == 0:
            T.evaluate(T.continue_loop())
        if i > 14:
            T.break_loop()
        A[i] = i
''', ["            continue", "            break"]),
    # `x = T.meta_var(v)` names `v` itself: no LetStmt, the value substituted where used
    "meta_var_names_its_value": (TIRX + '''@T.prim_func(s_tir=True)
def f(a: T.handle, B: T.Buffer((4,), "float32")):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    half = T.meta_var(T.min(n // 2, 4))
    scale = T.meta_var(2.0)
    one = T.meta_var(1)
    for i in range(half):
        B[i] = A[i] * scale + T.cast(one, "float32")
''', ["for i in range(T.min(n // 2, 4)):",
       "B[i] = A[i] * T.float32(2) + T.float32(1)"]),
    # a dict argument is a Python dict: its bools print as Python's (T.target refuses T.bool)
    "python_bool_in_a_target_dict": (TIRX + '''@T.prim_func(s_tir=True)
def f(A: T.Buffer((4,), "float32")):
    T.func_attr({"target": T.target({"kind": "webgpu", "supports_subgroups": True, "host": "llvm"})})
    A[0] = T.float32(1)
''', ['T.target({"kind": "webgpu", "supports_subgroups": True, "host": "llvm"})']),
    # TVM's main branch spells buffer fields through the buffer's type: `A.ty.shape`
    "buffer_type_fields": (TIRX + '''@T.prim_func(s_tir=True)
def f(a: T.handle, B: T.Buffer((4,), "int32")):
    A = T.match_buffer(a, (4, 8), "float32", elem_offset=2)
    for i in range(A.ty.shape[0]):
        B[i] = A.ty.elem_offset + A.ty.shape[1]
''', ["for i in range(4):", "B[i] = 10"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_construct_round_trips(name):
    text, expected = CASES[name]
    r = tirkit.parse(text, f"{name}.py")
    assert [d for d in r.diagnostics if d.severity == "error"] == []
    assert r.module.functions
    printed = tirkit.to_script(r.module)
    again = tirkit.parse(printed)
    assert [d for d in again.diagnostics if d.severity == "error"] == []
    assert tirkit.structural_equal(again.module, r.module)
    assert tirkit.to_script(again.module) == printed
    for snippet in expected:
        assert snippet in printed, printed


def test_comments_stay_with_the_statement_they_precede():
    text = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    # first loop
    for i in range(4):
        # inner store
        A[i] = T.float32(0)  # zero it
    # second loop
    for i in range(4):
        A[i] = A[i] + T.float32(1)
'''
    assert tirkit.to_script(tirkit.parse(text).module) == text


def test_folding_and_negation_do_not_hide_other_code():
    text = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    A[0] = 7 // 2 + A[1] % 3 - (-A[2])
'''
    printed = tirkit.to_script(tirkit.parse(text).module)
    assert "A[0] = 3 + A[1] % 3 - A[2] * -1" in printed


STORE_CONVERTS = '''from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float16")):
    for i in range(8):
        B[i] = A[i] + 1
        C[i] = B[i]
'''


def test_store_of_another_type_converts_like_tvm():
    # TVM's parser casts a stored value to the buffer's type: the IR holds that Cast, and we
    # say so with a warning (an error only where a float loses its fraction in an int buffer)
    from tirkit.ir import stmt as S
    from tirkit.ir.visit import walk
    r = tirkit.parse(STORE_CONVERTS, "k.py")
    got = sorted((d.span.line, d.code, d.severity) for d in r.diagnostics)
    assert got == [(7, "type/mismatch", "warning"), (8, "type/mismatch", "warning")]
    stores = []
    walk(r.module.prim_funcs()[0], lambda n: stores.append(n) if isinstance(n, S.BufferStore)
         else None)
    assert [(type(s.value).__name__, s.value.dtype) for s in stores] == [
        ("Cast", "float32"), ("Cast", "float16")]
    printed = tirkit.to_script(r.module)
    assert 'B[i] = T.Cast("float32", A[i] + 1)' in printed
    again = tirkit.parse(printed)
    assert again.diagnostics == [] and tirkit.structural_equal(again.module, r.module)
    lossy = STORE_CONVERTS.replace('C: T.Buffer((8,), "float16")', 'C: T.Buffer((8,), "int8")')
    errs = [(d.span.line, d.code) for d in tirkit.parse(lossy).diagnostics
            if d.severity == "error"]
    assert errs == [(8, "type/mismatch")]
    # a constant is converted on the spot, as tvm::cast folds it
    folded = tirkit.parse(STORE_CONVERTS.replace("C[i] = B[i]", "C[i] = T.float32(0.5)"))
    assert "C[i] = T.float16(0.5)" in tirkit.to_script(folded.module)


def test_a_lone_block_without_iterators_is_the_root():
    # TVM's rule: a function body that is one block without iterators is the root itself;
    # an explicit `T.block("root")` around it stays in the text, so it reads back the same
    text = '''from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    with T.block("ext"):
        T.reads(A[0:4])
        T.writes(A[0:4])
        T.evaluate(T.call_extern("void", "g", A.data))


@T.prim_func
def g(A: T.Buffer((4,), "float32")):
    with T.block("root"):
        with T.block("ext"):
            T.reads(A[0:4])
            T.writes(A[0:4])
            T.evaluate(T.call_extern("void", "g", A.data))
'''
    r = tirkit.parse(text)
    chains = {}
    for name, f in r.module.functions:
        b, chain = f.body, []
        while hasattr(b, "block"):
            chain.append(b.block.name_hint)
            b = b.block.body
        chains[name] = chain
    assert chains == {"f": ["ext"], "g": ["root", "ext"]}
    printed = tirkit.to_script(r.module)
    assert '    with T.block("root"):\n        with T.block("ext"):' in printed
    assert tirkit.structural_equal(tirkit.parse(printed).module, r.module)


def test_vscale_is_an_int32_expression():
    text, _ = CASES["vscale_is_an_int32"]
    f = tirkit.parse(text).module.prim_funcs()[0]
    f = f[1] if isinstance(f, tuple) else f
    assert (f.body.extent.dtype, f.body.extent.a.dtype) == ("int32", "int32")


def test_annotations_of_a_statement_allocation_count_in_equality():
    text, _ = CASES["statement_alloc_buffer_with_annotations"]
    a = tirkit.parse(text).module
    b = tirkit.parse(text.replace(": 64}", ": 32}")).module
    assert not tirkit.structural_equal(a, b)


def test_a_loop_bound_that_is_not_an_integer_converts_like_tvm():
    # TVM's parser converts any loop bound to int32: `range(2.5)` runs twice, `n * 0.5`
    # under a Cast; a float bound is an error (its fraction is lost), a bool one a warning
    from tirkit.ir import expr as E
    from tirkit.ir import stmt as S
    from tirkit.ir.visit import walk
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    for i in range(2.5):
        A[i] = T.float32(1)
    for j0, j1 in T.grid(4, 1e1):
        A[j1] = T.float32(2)
    for k in range(0, n * 0.5):
        A[k] = T.float32(3)
    for m in T.serial(True):
        A[m] = T.float32(4)
"""
    r = tirkit.parse(text, "k.py")
    got = [(d.span.line, d.span.column, d.severity, d.message) for d in r.diagnostics]
    lossy = "a float32 loop bound: TVM converts it to int32 and drops its fraction " \
            "(write an integer)"
    assert got == [(6, 20, "error", lossy), (8, 29, "error", lossy), (10, 23, "error", lossy),
                   (12, 23, "warning",
                    "a bool loop bound: TVM converts it to int32 (write an integer)")]
    loops = []
    walk(r.module.prim_funcs()[0], lambda x: loops.append(x) if isinstance(x, S.For) else None)
    bounds = [(x.loop_var.name, x.extent) for x in loops]
    assert [(v, e.value) for v, e in bounds if isinstance(e, E.IntImm)] == [
        ("i", 2), ("j0", 4), ("j1", 10), ("m", 1)]
    (k,) = [e for v, e in bounds if v == "k"]
    assert isinstance(k, E.Cast) and k.dtype == "int32" and k.value.dtype == "float32"
    assert all(e.dtype == "int32" for _, e in bounds)
    # printed as TVM prints it
    assert "    for k in range(T.Cast(\"int32\", T.Cast(\"float32\", n) * T.float32(0.5))):" \
        in tirkit.to_script(r.module).split("\n")


def test_a_literal_that_does_not_fit_its_dtype_is_an_error():
    # TVM's IntImm and FloatImm refuse these; infinity is a float16 value
    text = CLASSIC + """@T.prim_func
def f(B: T.Buffer((8,), "float32")):
    B[0] = T.Cast("float32", T.int8(300))
    B[1] = T.Cast("float32", T.uint8(-1))
    B[2] = T.Cast("float32", T.float16(65536))
    B[3] = T.Cast("float32", T.float16(-70000.0))
    B[4] = T.Cast("float32", T.float8_e4m3fn(500))
    B[5] = T.float32(1e39)
    B[6] = T.Cast("float32", T.float16(65504)) + T.Cast("float32", T.float16(1e400))
    B[7] = T.Cast("float32", T.int8(-128)) + T.Cast("float32", T.float8_e4m3fn(448))
"""
    got = [(d.span.line, d.severity, d.message) for d in tirkit.parse(text).diagnostics]
    assert got == [
        (6, "error", "300 does not fit in int8"),
        (7, "error", "-1 does not fit in uint8"),
        (8, "error", "65536 does not fit in float16 (its finite values lie within ±65504)"),
        (9, "error", "-70000.0 does not fit in float16 (its finite values lie within ±65504)"),
        (10, "error", "500 does not fit in float8_e4m3fn (its finite values lie within ±448)"),
        (11, "error", "1e+39 does not fit in float32 (its finite values lie within "
                      "±3.40282e+38)")]


def test_a_negative_extent_is_an_error_and_a_run_refuses_one():
    """A buffer of constant negative extent is an error where it is declared (a fuzzed
    allocation of extent -1 reached numpy as an internal error); one that a run computes
    negative is refused at the allocation."""
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((16, -2), "float32"), n: T.int32):
    X = T.alloc_buffer((T.int64(4), T.int64(-1)))
    Y = T.alloc_buffer((n - 20,))
    for i in range(4):
        Y[i] = X[i, 0]
"""
    got = [(d.span.line, d.code, d.message) for d in tirkit.parse(text).diagnostics]
    assert got == [
        (5, "type/mismatch", "buffer 'A' has extent -2 in dimension 1: an extent is 0 or more"),
        (6, "type/mismatch", "buffer 'X' has extent -1 in dimension 1: an extent is 0 or more")]
    import numpy as np
    from tirkit.codegen.interp import run_reference
    from tirkit.diagnostics import TirkitError
    (_, f), = tirkit.parse(text.replace("(16, -2)", "(16, 2)").replace(
        "T.int64(-1)", "T.int64(1)")).module.prim_funcs()
    with pytest.raises(TirkitError) as e:
        run_reference(f, [np.ones((16, 2), np.float32)], [4])
    (d,) = e.value.diagnostics
    assert (d.code, d.message, d.span.line) == (
        "codegen/argument", "'Y' is allocated with extents [-16]", 7)


def test_bitwise_operands_and_block_domains_are_integers():
    # TVM refuses a float on either side of a shift or a bitwise operator, and a float domain
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8.0, i)
            B[vi] = T.Cast("int32", T.shift_right(0.5, vi) + (A[vi] >> 1)) + (vi & 3)
"""
    got = [(d.span.line, d.span.column, d.message) for d in tirkit.parse(text).diagnostics]
    assert got == [(8, 33, "a block iterator's domain is an integer, not float32"),
                   (9, 51, "T.shift_right takes integers, not float32"),
                   (9, 63, "operator '>>' takes integers, not float32")]


def test_indices_and_thread_extents_are_integers():
    # TVM keeps a float index until it lowers it, and refuses a float thread extent
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    tx = T.launch_thread("threadIdx.x", 128.0)
    B[tx] = A[tx + 1e9] * T.float32(2)
"""
    got = [(d.span.line, d.span.column, d.message) for d in tirkit.parse(text).diagnostics]
    assert got == [(6, 41, "a thread extent is an integer, not float32"),
                   (7, 15, "an index is an integer, not float32")]


def test_allocation_extents_are_integers():
    # an allocation's extents count elements, as a buffer's shape does (a float extent
    # reached the code generator, which failed on it internally)
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    data = T.allocate([0.5], "int32")
    B = T.Buffer([2], "int32", data)
    B[0] = A[0]
    A[1] = B[0]
"""
    got = [(d.span.line, d.span.column, d.severity, d.message)
           for d in tirkit.parse(text).diagnostics]
    assert got == [(6, 24, "error", "an allocation extent is an integer, not float32")]


def test_a_tuple_index_gives_its_parts_in_a_store_only():
    # `for j in T.grid(4, 4)`: TVM's parser stores `A[j]` as `A[j_0, j_1]`, refuses `B[j]`
    # on a one-dimensional B (two indices) and cannot read `A[j]`
    from tirkit.ir import stmt as S
    from tirkit.ir.visit import walk
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((16,), "float32")):
    for j in T.grid(4, 4):
        A[j] = T.float32(2)
        B[j] = T.float32(3)
        A[j[0], j[1]] = A[j] + T.float32(1)
"""
    r = tirkit.parse(text)
    assert [(d.span.line, d.span.column, d.message) for d in r.diagnostics] == [
        (8, 9, "buffer 'B' has 1 dimension but is indexed with 2 indexes"),
        (9, 27, "an index is one integer expression, not a tuple of 2 (index with its parts)")]
    stores = []
    walk(r.module.prim_funcs()[0], lambda x: stores.append(x)
         if isinstance(x, S.BufferStore) else None)
    assert [i.name for i in stores[0].indices] == ["j_0", "j_1"]


def test_a_failed_definition_is_reported_once_not_at_each_use():
    text = TIRX + '''@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in range(16):
        B = T.alloc_buffer((16,), "float32", colour="red")
        B[i] = A[i]
        A[i] = B[i] + T.float32(1)
        A[i] = Z[i]
'''
    diags = tirkit.parse(text).diagnostics
    assert [(d.line, d.code) for d in diags] == [(7, "type/mismatch"), (10, "name/undefined")]
    assert "unknown buffer argument 'colour'" in diags[0].message
    assert "'Z'" in diags[1].message


def test_a_block_binding_is_one_integer_expression():
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((8, 4), "float32")):
    for it in T.grid(8, 4):
        with T.block("x"):
            vi = T.axis.spatial(8, it)
            vj = T.axis.spatial(4, it[1] * 1.5)
            vk = T.axis.spatial(8, T.Add(it[0], 0))
            A[vi, 0] = T.float32(0)
"""
    diags = tirkit.parse(text).diagnostics
    assert [(d.line, d.code) for d in diags] == [(8, "type/mismatch"), (9, "type/mismatch")]
    assert all("is one integer expression" in d.message for d in diags)


def test_a_loop_step_is_kept_not_dropped():
    # `range(0, 16, 2)` once ran 16 iterations: its step was read as nothing
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((16,), "int32")):
    for i in range(0, 16, 2):
        A[i] = i
    for j in T.serial(0, 16, step=2):
        A[j] = j
    for k in range(0, 16, 1):
        A[k] = k
"""
    r = tirkit.parse(text)
    assert r.diagnostics == []
    loops = r.module["f"].body.seq
    assert [f.extent.value for f in loops] == [8, 8, 16]
    assert [bool(f.stepped) for f in loops] == [True, True, False]


def test_a_module_method_decorated_by_an_expression_is_kept_as_python():
    # `@T.evaluate(0).prim_func(...)` names no kernel decorator: the method is the module's
    # own Python (a foreign function), where the lowering had failed on the decorator
    text = """from tvm.script import ir as I
from tvm.script import tirx as T


@I.ir_module
class M:
    @T.evaluate(0).prim_func(s_tir=True)
    def helper():
        T.evaluate(1)

    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(1)
"""
    r = tirkit.parse(text)
    assert r.diagnostics == []
    assert [n for n, _ in r.module.prim_funcs()] == ["main"]


TWO_VALUES = TIRX + '''@T.prim_func(s_tir=True)
def f(A: T.Buffer((4,), "float32")):
    T.func_attr({"a": 1})
    T.func_attr({"b": 1, "a": 1})
    with T.sblock():
        T.sblock_attr({"key": {"k": 1}, "x": 1})
        T.sblock_attr({"key": {"k": 2}})
        T.sblock_attr({"x": 2})
        A[0] = T.float32(1)
'''


def test_an_annotation_given_two_values_is_an_error():
    r = tirkit.parse(TWO_VALUES)
    found = [(d.code, d.span.line, d.message) for d in r.diagnostics]
    assert found == [
        ("well-formed/redefinition", 7, "function attribute 'a' is set twice"),
        ("well-formed/redefinition", 10, "block annotation 'k' in 'key' is set to 1, then to 2"),
        ("well-formed/redefinition", 11, "block annotation 'x' is set to 1, then to 2")]
    assert [s.line for s, _ in r.diagnostics[0].related] == [6]
    # what was set before the refused call stays
    f = r.module["f"]
    assert dict(f.attrs) == {"a": 1, "b": 1}
    assert dict(f.body.block.annotations) == {"key": {"k": 1}, "x": 1}


INLINE_META_VAR = TIRX + '''@T.prim_func(s_tir=True)
def f(B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = T.cast(T.meta_var(1), "float32")
'''


def test_a_meta_var_outside_an_assignment_is_an_error():
    (d,) = tirkit.parse(INLINE_META_VAR).diagnostics
    assert (d.code, d.span.line, d.span.column) == ("type/mismatch", 7, 23)
    assert "x = T.meta_var(value)" in d.message


# one statement per line from line 10 on, each with one wrong use of vector lanes; lines 7-9
# are sound vector code
VECTOR_LANES = CLASSIC + '''@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
      C: T.Buffer((4, 16), "float32"), M: T.Buffer((16,), "bool")):
    B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 1, 4)] + T.Broadcast(T.float32(1), 4)
    B[T.Ramp(0, 1, 4)] = T.Select(A[T.Ramp(0, 1, 4)] < T.Broadcast(T.float32(0), 4), A[T.Ramp(0, 1, 4)], A[T.Ramp(4, 1, 4)])
    C[1, T.Ramp(0, 1, 4)] = T.Select(A[1] < T.float32(0), A[T.Ramp(0, 1, 4)], A[T.Ramp(4, 1, 4)])
    B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 1, 4)] + T.Broadcast(T.float32(1), 8)
    M[T.Ramp(0, 1, 4)] = T.bitwise_and(A[T.Ramp(0, 1, 4)] < T.Broadcast(T.float32(0), 4), T.Broadcast(T.bool(True), 8))
    B[T.Ramp(0, 1, 4)] = T.Select(A[T.Ramp(0, 1, 8)] < T.Broadcast(T.float32(0), 8), A[T.Ramp(0, 1, 4)], A[T.Ramp(4, 1, 4)])
    C[T.Ramp(0, 1, 4), 1] = A[T.Ramp(0, 1, 4)]
    B[T.Ramp(0, 1, 4)] = C[T.Ramp(0, 1, 4), 1]
    B[T.Ramp(0, 1, 4)] = T.if_then_else(A[T.Ramp(0, 1, 8)] < T.Broadcast(T.float32(0), 8), A[T.Ramp(0, 1, 4)], A[T.Ramp(4, 1, 4)])
    B[0] = A[0] + T.Broadcast(T.float32(1), 70000)[0]
    B[0:4] = A[0:70000]
'''


def test_vector_lanes_are_checked():
    # each of these reached the code generator, which failed with an internal error, or built
    # a vector of 2**31 lanes; TVM refuses lines 10-14, and keeps lanes in 16 bits
    r = tirkit.parse(VECTOR_LANES)
    got = [(d.span.line, d.span.column, d.code, d.message) for d in r.diagnostics]
    mismatch = "type/mismatch"
    assert got == [
        (10, 26, mismatch, "cannot combine float32x4 and float32x8: vector operands need one "
                           "number of lanes"),
        (11, 26, mismatch, "cannot combine boolx4 and boolx8: vector operands need one number "
                           "of lanes"),
        (12, 35, mismatch, "the condition of T.Select is boolx8, but its values are float32x4: "
                           "a vector condition needs their number of lanes"),
        (13, 7, mismatch, "only the last index of an access may be a vector (a slice of more "
                          "than one element, or a T.Ramp)"),
        (14, 28, mismatch, "only the last index of an access may be a vector (a slice of more "
                           "than one element, or a T.Ramp)"),
        (15, 41, mismatch, "the condition of T.if_then_else is boolx8, but its values are "
                           "float32x4: a vector condition needs their number of lanes"),
        (16, 19, mismatch, "70000 lanes: a vector has at most 65535 (TVM keeps the number in "
                           "16 bits)"),
        (17, 16, mismatch, "a slice of 70000 elements: a vector access has at most 65535 lanes "
                           "(TVM keeps the number in 16 bits)")]
    # a load with a slice is a region in TVM's classic parser, as T.realize's argument
    region = tirkit.parse(CLASSIC + '''@T.prim_func
def f(A: T.Buffer((1, 8, 4), "float32")):
    T.realize(A[0:1, 0:8, 0:4], "")
''')
    assert region.diagnostics == []
    assert tirkit.to_script(region.module).endswith('T.realize(A[0, 0:8, 0:4], "")\n')
    bad = tirkit.parse(CLASSIC + '''@T.prim_func
def f(A: T.Buffer((16,), "float32x70000"), B: T.Buffer((16,), "float32x0")):
    T.evaluate(0)
''')
    assert [(d.span.line, d.message) for d in bad.diagnostics] == [
        (5, "'float32x70000' is not a dtype"), (5, "'float32x0' is not a dtype")]


def test_a_parameter_whose_declaration_fails_is_reported_once():
    # each use of the parameter had a second error ("'A' is not a buffer and cannot be stored
    # to", "'A' is a handle, not a buffer"): one root cause, one diagnostic
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((4,), "flaot32"), B: T.Buffer((4,), "float32"), n: T.int33):
    for i in range(4):
        A[i] = B[i] + A[i]
        B[i] = A[i] + T.float32(n)
    with T.block("x"):
        C = T.match_buffer(A[0:4], (4,))
        B[0] = C[0]


@T.prim_func
def g(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i] + A[3 - i]
"""
    r = tirkit.parse(text)
    assert [(d.span.line, d.span.column, d.code) for d in r.diagnostics] == [
        (5, 10, "type/mismatch"), (5, 72, "name/undefined")]
    assert [d.code for d in tirkit.check(text)] == ["type/mismatch", "name/undefined"]
    (_, f), (_, g) = r.module.prim_funcs()
    assert [p.name for p in f.params] == ["A", "B_handle", "n"]
    assert tirkit.to_script(g) == CLASSIC + text[text.index("@T.prim_func\ndef g"):]
    # any other parameter is a variable of unknown type: a `T.match_buffer` of it declares
    # its buffer, the body is checked, and its uses raise no type question again
    other = CLASSIC + """@T.prim_func
def h(a: T.handel):
    A = T.match_buffer(a, (4,))
    A[4] = T.float32(1)


@T.prim_func
def s(A: T.Buffer((4,), "float32"), n: T.int33):
    for i in range(n):
        A[i + n] = T.float32(1)
"""
    assert [(d.span.line, d.code) for d in tirkit.check(other)] == [
        (5, "name/undefined"), (7, "bounds/out-of-bounds"), (11, "name/undefined")]


def test_slice_bounds_are_integers_and_tensor_core_builtins_take_their_arguments():
    # a float region start made a float element offset, and a wmma load of 6 arguments read
    # past its arguments, both in the code generator
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((64, 64), "float16"), B: T.Buffer((64,), "float16")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            AA = T.match_buffer(A[vi * 1e9 : vi * 16 + 16, 0:16], (16, 16), "float16")
            B[0 : 4.0] = A[0, 0:4]
            B[0:4] = A[0, 0 : 8 : 2.0]
    F = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_a")
    T.evaluate(T.tvm_load_matrix_sync(F.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float16"), A.data, 0, 256, 1, dtype="handle")))
    T.evaluate(T.tvm_fill_fragment(F.data, 16, 16, 16, 0))
"""
    got = [(d.span.line, d.span.column, d.message) for d in tirkit.parse(text).diagnostics]
    assert got == [
        (9, 35, "a slice bound is an integer, not float32"),
        (10, 19, "a slice bound is an integer, not float32"),
        (11, 35, "a slice bound is an integer, not float32"),
        (13, 16, "T.tvm_load_matrix_sync takes 8 arguments, got 6"),
        (14, 16, "T.tvm_fill_fragment takes 6 arguments, got 5")]


def test_a_slice_extent_folds_through_the_linear_form():
    from tirkit.ir import stmt as S
    from tirkit.ir.visit import walk
    r = tirkit.parse(CLASSIC + """@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for i in range(8):
        A[i * 4 + 1:(i + 1) * 4 + 1] = A[i * 8 - 3 + 4:i * 8 + 5] + T.Broadcast(T.float32(1), 4)
""")
    assert r.diagnostics == []
    stores = []
    walk(r.module.prim_funcs()[0][1], lambda x: stores.append(x)
         if isinstance(x, S.BufferStore) else None)
    (store,) = stores
    assert store.indices[0].lanes == 4 and store.value.dtype == "float32x4"


def test_a_string_is_not_a_stored_number():
    # `Accum[i] = T.float32` (a fuzzed kernel: the call's parentheses cut) reached numpy as
    # a float conversion of 'float32'
    text = CLASSIC + """@T.prim_func
def f(A: T.Buffer((4,), "float32"), H: T.Buffer((4,), "handle")):
    A[0] = T.float32
    A[1] = "two"
    H[0] = T.address_of(A[0])
"""
    got = [(d.span.line, d.severity, d.message) for d in tirkit.parse(text).diagnostics]
    assert got == [
        (6, "error", "`float32` names a dtype and is not a value of float32 buffer 'A'"),
        (7, "error", "the string 'two' is not a value of float32 buffer 'A'")]


@pytest.mark.parametrize("frame, message", [
    ("T.LetStmt()", "T.LetStmt takes a value"),
    ("T.Assert()", "T.Assert takes (condition, message)"),
])
def test_a_frame_without_its_arguments_is_an_error(frame, message):
    # (fuzz seed 167: `with T.LetStmt() as var:` failed the lowering)
    text = CLASSIC + f'''@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    with {frame} as v:
        A[0] = 1
'''
    diags = tirkit.check(text)
    assert [(d.line, d.code) for d in diags] == [(6, "type/mismatch")]
    assert diags[0].message.startswith(message)
