"""The `T.` namespace: every name the script language knows, with documentation.

`NAMES` lists the names of TVMScript's `tir`/`tirx` namespaces (both spellings, including
names current TVM dropped, such as `allocate_const`); `DOCS` documents the ones users meet
most, for hover and completion.  A `T.` name outside `NAMES` and the intrinsic families in
`FAMILIES` is reported as `name/undefined`.
"""
from __future__ import annotations

NAMES = frozenset("""
    Add And Assert Bind BitwiseAnd BitwiseNot BitwiseOr BitwiseXor Break Broadcast Buffer
    BufferLoad Call CallEffectKind Cast CommReducer ComposeLayout Continue Div
    DtypeConstructor EQ Else ExecScope FloatImm FloorDiv FloorMod GE GT If IntImm Iter
    IterVar LE LShift LT Layout Let LetAnnotation LetStmt LocalVectorAnnotation Max Min Mod
    Mul NE Not Optional Or Ptr R RShift Ramp Range Reduce Return S SMEMPool ScopeIdDef
    Select Shuffle Sub TMEMPool TVMBackendAllocWorkspace TVMBackendFreeWorkspace TensorMap
    Then TileLayout Tuple Var While abs acos acosh add_to_parent address_of alloc_buffer
    alloc_cast_frag alloc_local alloc_scalar alloc_shared alloc_tcgen05_ldst_frag allocate
    allocate_const anylist_getitem anylist_resetitem anylist_setitem_call_cpacked
    anylist_setitem_call_packed arg asin asinh assume atan atan2 atanh atomic_add attr axis
    bf16 bfloat16 bind bitwise_and bitwise_not bitwise_or bitwise_xor block block_attr
    block_name_suffix_context bool boolean break_loop broadcast buffer buffer_decl
    buffer_store buffer_var builder call_cpacked call_cpacked_lowered call_extern
    call_ffi_kernel call_intrin call_kernel call_llvm_intrin call_llvm_pure_intrin
    call_packed call_packed_lowered call_pure_extern cast ceil ceildiv cluster cluster_id
    clz comm_reducer constexpr continue_loop cooperative_tensor_fill cooperative_tensor_load
    cooperative_tensor_multiply_accumulate cooperative_tensor_store copysign cos cosh
    create_barriers cta cta_id cta_id_in_cluster cta_id_in_pair cuda decl_buffer decl_scalar
    device_entry dp4a end_profile_intrinsic env_thread erf evaluate exp exp10 exp2 f16 f32
    f64 fabs filter float16 float32 float4_e2m1fn float64 float6_e2m3fn float6_e3m2fn
    float8_e3m4 float8_e4m3 float8_e4m3b11fnuz float8_e4m3fn float8_e4m3fnuz float8_e5m2
    float8_e5m2fnuz float8_e8m0fnu floor floordiv floormod fma fmod func_attr func_name
    func_ret get_active_lane_mask grid handle handle_add_byte_offset hint hypot i16 i32 i64
    i8 if_then_else ignore_loop_partition index_map infinity init inline int16 int32 int64
    int8 isfinite isinf isnan isnullptr iter_var jit lane_id launch_thread ldexp let likely
    llvm_lookup_intrinsic_id local_scalar log log10 log1p log2 lookup_param macro
    make_filled_simdgroup_matrix masked_load masked_store match_buffer max max_value
    meta_class meta_var metal min min_value mma_fill mma_store nearbyint nextafter nki
    nvshmem parallel parser popcount pow prim_func print_buffer ptr ptr_byte_offset ptx
    ptx_arrive_barrier ptx_arrive_barrier_expect_tx ptx_commit_group ptx_cp_async
    ptx_cp_async_barrier ptx_cp_async_bulk ptx_init_barrier_thread_count ptx_ldmatrix
    ptx_legacy ptx_mma ptx_mma_sp ptx_wait_barrier ptx_wait_group q_multiply_shift
    q_multiply_shift_per_axis ramp reads realize register_script_namespace reinterpret ret
    round rsqrt s_tir sblock sblock_alloc_buffer sblock_attr scalar_wrapper scope_id
    selector serial shared_scalar shift_left shift_right sigmoid simdgroup_load
    simdgroup_multiply_accumulate simdgroup_store sin sinh smem sqrt start_profile_intrinsic
    static_assert tan tanh target tensormap_encode_tiled texture2d_load texture2d_store
    thread thread_binding thread_id thread_id_in_wg thread_return tile tmem trunc truncdiv
    truncmod tvm_access_ptr tvm_bmma_sync tvm_call_cpacked tvm_call_cpacked_lowered
    tvm_call_packed tvm_call_packed_lowered tvm_fill_fragment tvm_global_barrier_kinit
    tvm_kernel_replace_point tvm_load_matrix_sync tvm_mma_sync tvm_stack_alloca
    tvm_stack_make_array tvm_stack_make_shape tvm_storage_sync tvm_store_matrix_sync
    tvm_struct_get tvm_struct_set tvm_thread_allreduce tvm_thread_invariant
    tvm_throw_last_error tvm_tuple tvm_warp_activemask tvm_warp_shuffle
    tvm_warp_shuffle_down tvm_warp_shuffle_up tvm_warp_shuffle_xor type_annotation u16 u32
    u64 u8 uint16 uint32 uint64 uint8 undef unroll var vectorcombine vectorhigh vectorized
    vectorlow void vscale warp warp_id warp_id_in_wg warpgroup warpgroup_id webgpu wg
    wg_reg_tile where writes
""".split())

# Intrinsic families: any name with one of these prefixes is an intrinsic call.
FAMILIES = ("ptx_", "tvm_", "call_", "mma_", "atomic_", "texture2d_", "simdgroup_", "cuda_",
            "cooperative_", "anylist_", "nvshmem_")

DOCS = {
    'prim_func': 'Decorator: defines a TensorIR function (`@T.prim_func`, `private=`, `s_tir=`, `check_well_formed=`).',
    'Buffer': '`T.Buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global", ...)`: a buffer parameter annotation or an aliasing buffer.',
    'match_buffer': '`T.match_buffer(param_or_region, shape, dtype="float32", ...)`: binds a handle parameter (or, in a block, a buffer region) to a buffer.',
    'alloc_buffer': '`T.alloc_buffer(shape, dtype="float32", scope="global")`: allocates an intermediate buffer owned by the enclosing block.',
    'decl_buffer': '`T.decl_buffer(shape, dtype, data=...)`: declares a buffer over existing data.',
    'block': '`with T.block(name):` a TensorIR block (classic spelling): iterators, read/write regions, init and body.',
    'sblock': '`with T.sblock(name):` a TensorIR block (current TVM spelling).',
    'block_attr': '`T.block_attr({...})`: annotations of the enclosing block.',
    'sblock_attr': '`T.sblock_attr({...})`: annotations of the enclosing block.',
    'axis': '`T.axis.spatial/reduce/scan/opaque(dom, binding)` and `T.axis.remap(kinds, loops)`: block iterators.',
    'reads': '`T.reads(*regions)`: the regions a block reads.',
    'writes': '`T.writes(*regions)`: the regions a block writes.',
    'init': '`with T.init():` the statement that initialises a reduction, run at its first iteration.',
    'where': '`T.where(predicate)`: the block runs only where the predicate holds.',
    'grid': '`T.grid(*extents)`: nested serial loops.',
    'serial': '`T.serial(start, stop=None, annotations=None)`: a serial loop.',
    'parallel': '`T.parallel(start, stop=None)`: a loop run in parallel across CPU threads.',
    'vectorized': '`T.vectorized(start, stop=None)`: a loop turned into vector instructions.',
    'unroll': '`T.unroll(start, stop=None)`: a loop unrolled by the compiler.',
    'thread_binding': '`T.thread_binding(start, stop=None, thread="threadIdx.x")`: a loop bound to a GPU thread axis.',
    'func_attr': '`T.func_attr({...})`: attributes of the function (global_symbol, tir.noalias, target...).',
    'allocate_const': '`T.allocate_const(data, dtype, extents)`: a constant tensor (an inline list, or `P["name"]` from a .params file).',
    'allocate': '`T.allocate(extents, dtype, scope)`: allocates a flat buffer (low-level TIR).',
    'launch_thread': '`T.launch_thread(thread, extent)`: launches a GPU thread axis (low-level TIR).',
    'env_thread': '`T.env_thread(tag)`: declares a GPU thread variable.',
    'evaluate': '`T.evaluate(expr)`: evaluates an expression for its effect.',
    'if_then_else': '`T.if_then_else(cond, a, b)`: a when cond holds, else b; only the taken branch is read.',
    'Select': '`T.Select(cond, a, b)`: a or b; both operands are evaluated.',
    'Cast': '`T.Cast(dtype, x)`: converts x to dtype.',
    'cast': '`T.cast(x, dtype)`: converts x to dtype.',
    'max': '`T.max(a, b)`: the larger of a and b.',
    'min': '`T.min(a, b)`: the smaller of a and b.',
    'exp': '`T.exp(x)`: e to the power x.',
    'sqrt': '`T.sqrt(x)`: square root.',
    'log': '`T.log(x)`: natural logarithm.',
    'tanh': '`T.tanh(x)`: hyperbolic tangent.',
    'sigmoid': '`T.sigmoid(x)`: 1 / (1 + exp(-x)).',
    'floor': '`T.floor(x)`: rounds down.',
    'ceil': '`T.ceil(x)`: rounds up.',
    'abs': '`T.abs(x)`: absolute value.',
    'floordiv': '`T.floordiv(a, b)`: division rounding toward minus infinity (`a // b`).',
    'floormod': '`T.floormod(a, b)`: remainder of floordiv (`a % b`).',
    'truncdiv': '`T.truncdiv(a, b)`: division rounding toward zero.',
    'truncmod': '`T.truncmod(a, b)`: remainder of truncdiv.',
    'min_value': '`T.min_value(dtype)`: the smallest value of dtype.',
    'max_value': '`T.max_value(dtype)`: the largest value of dtype.',
    'call_extern': '`T.call_extern(dtype, name, *args)`: calls an external C function.',
    'handle': '`T.handle`: an opaque pointer parameter; `T.handle(dtype, scope)` a typed pointer.',
    'reinterpret': '`T.reinterpret(dtype, x)`: reinterprets the bits of x as dtype.',
    'Ramp': '`T.Ramp(base, stride, lanes)`: the vector base, base+stride, ...',
    'Broadcast': '`T.Broadcast(value, lanes)`: a vector of lanes copies of value.',
    'Let': '`T.Let(var, value, body)`: body with var bound to value.',
}

# Sparse kernels, in SparseTIR's spelling (script/lower/sparse.py)
SPARSE_DOCS = {
    'dense_fixed': '`T.dense_fixed(length)`: a dense axis (an uncompressed level, `u`).',
    'dense_variable': '`T.dense_variable(parent, (length, nnz), indptr, "int32")`: a ragged '
                      'dense axis: row p of the parent holds `indptr[p + 1] - indptr[p]` '
                      'elements.',
    'sparse_fixed': '`T.sparse_fixed(parent, (length, nnz_cols), indices, "int32")`: a '
                    'compressed axis with nnz_cols coordinates per parent position (ELL).',
    'sparse_variable': '`T.sparse_variable(parent, (length, nnz), (indptr, indices), '
                       '"int32")`: a compressed axis (`c`, CSR-like); `format="hash"` marks '
                       'one whose coordinates are found in constant time (`h`).',
    'match_sparse_buffer': '`T.match_sparse_buffer(param, (I, J), "float32")`: the sparse '
                           'buffer a handle parameter holds, over the given axes.',
    'sp_iter': '`with T.sp_iter([I, J, K], "SRS", "name") as [i, j, k]:` iterates the '
               'axes (S spatial, R reduction); hover shows its asymptotic cost.',
}
DOCS.update(SPARSE_DOCS)
NAMES = NAMES | frozenset(SPARSE_DOCS)
