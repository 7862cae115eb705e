"""dataflow/unused-buffer: an allocated buffer whose values nothing uses (never touched,
written and never read, read only to compute such buffers) is a warning on its name; every
way a buffer's values can leave it unseen counts as a use; the quick fix of a buffer nothing
touches deletes its line, and the kernel computes the same after it."""
import numpy as np

import tirkit
from tirkit.codegen.interp import run_reference
from tirkit.verify.fixes import text_fixes

CODE = "dataflow/unused-buffer"
HEAD = "from tvm.script import tirx as T\n\n\n"

# softmax whose normalization reads S instead of E / Z: the exp, the row sum and the row max
# that feeds them are left with no use
SOFTMAX = HEAD + '''@T.prim_func(s_tir=True)
def softmax(A: T.Buffer((8, 16), "float32"), P: T.Buffer((8, 16), "float32")):
    M = T.alloc_buffer((8,), "float32")
    E = T.alloc_buffer((8, 16), "float32")
    Z = T.alloc_buffer((8,), "float32")
    for i, j in T.grid(8, 16):
        with T.sblock("rowmax"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                M[vi] = T.min_value("float32")
            M[vi] = T.max(M[vi], A[vi, vj])
    for i, j in T.grid(8, 16):
        with T.sblock("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(A[vi, vj] - M[vi])
    for i, j in T.grid(8, 16):
        with T.sblock("rowsum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                Z[vi] = T.float32(0)
            Z[vi] = Z[vi] + E[vi, vj]
    for i, j in T.grid(8, 16):
        with T.sblock("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = {norm}
'''


def unused(text):
    return [(d.span.line, d.span.column, d.message, [(s.line, m) for s, m in d.related])
            for d in tirkit.check(text) if d.code == CODE]


def test_a_dead_chain_is_reported_at_each_allocation():
    assert unused(SOFTMAX.format(norm="T.exp(A[vi, vj] - M[vi]) / Z[vi]")) == []
    got = unused(SOFTMAX.format(norm="A[vi, vj]"))
    assert got == [
        (6, 5, "`M` is read only to compute `E`, whose values nothing uses",
         [(10, "block 'rowmax' writes `M` here")]),
        (7, 5, "`E` is read only to compute `Z`, whose values nothing uses",
         [(16, "block 'exp' writes `E` here")]),
        (8, 5, "`Z` is written and never read: the work of block 'rowsum' is lost",
         [(20, "block 'rowsum' writes `Z` here")])]
    # the same when the normalization reads E but not Z: only the row sum is lost
    got = unused(SOFTMAX.format(norm="E[vi, vj]"))
    assert [(line, msg.partition(" is ")[2]) for line, _, msg, _ in got] == [
        (8, "written and never read: the work of block 'rowsum' is lost")]
    assert all(d.severity == "warning" for d in tirkit.check(SOFTMAX.format(norm="A[vi, vj]"))
               if d.code == CODE)


def _kernel(body, allocs='X = T.alloc_buffer((16,), "float32")', params=""):
    return HEAD + f'''@T.prim_func(s_tir=True)
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"){params}):
    {allocs}
''' + body


WRITE_X = '''    for i in range(16):
        with T.sblock("x"):
            vi = T.axis.remap("S", [i])
            X[vi] = A[vi] * T.float32(2)
'''


def test_each_way_a_value_leaves_a_buffer_is_a_use():
    uses = {
        "a store to a parameter": "B[vi] = X[vi]",
        "an index of a store to a parameter": "B[T.Cast(\"int32\", X[vi]) % 16] = A[vi]",
        "a condition": "if X[vi] > T.float32(0):\n                B[vi] = A[vi]",
        "a value in T.if_then_else": "B[vi] = T.if_then_else(X[vi] > 0, A[vi], T.float32(0))",
        "its data passed on": 'T.evaluate(T.call_extern("int32", "consume", X.data))',
        "its data named (removing it would leave the name undefined)": "T.evaluate(X.data)",
        "an address passed on": 'T.evaluate(T.call_extern("int32", "consume", '
                                'T.address_of(X[vi])))',
    }
    for what, use in uses.items():
        text = _kernel(WRITE_X + f'''    for i in range(16):
        with T.sblock("use"):
            vi = T.axis.remap("S", [i])
            {use}
''')
        assert unused(text) == [], what
    # a buffer viewed through a region of a T.match_buffer, or declared over its data
    matched = _kernel(WRITE_X + '''    with T.sblock("use"):
        V = T.match_buffer(X[0:16], (16,))
        for i in range(16):
            B[i] = V[i]
''')
    assert unused(matched) == []
    alias = HEAD + '''@T.prim_func(s_tir=True)
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,), "float32")
    Y = T.decl_buffer((16,), "float32", data=X.data)
    for i in range(16):
        X[i] = A[i]
    for i in range(16):
        B[i] = Y[i]
'''
    assert unused(alias) == []
    # ... and a declared T.reads is not a use
    declared = _kernel(WRITE_X + '''    for i in range(16):
        with T.sblock("use"):
            vi = T.axis.remap("S", [i])
            T.reads(X[vi], A[vi])
            T.writes(B[vi])
            B[vi] = A[vi]
''')
    assert [m for _, _, m, _ in unused(declared)] == [
        "`X` is written and never read: the work of block 'x' is lost"]


def test_a_buffer_read_only_by_its_own_update_and_one_never_touched():
    text = _kernel('''    for i, k in T.grid(16, 4):
        with T.sblock("acc"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                X[vi] = T.float32(0)
            X[vi] = X[vi] + A[vi]
    for i in range(16):
        B[i] = A[i]
''', allocs='X = T.alloc_buffer((16,), "float32")\n    temp = T.alloc_buffer((4,), "int8")')
    assert [(line, m) for line, _, m, _ in unused(text)] == [
        (6, "`X` is written and never read: the work of block 'acc' is lost"),
        (7, "`temp` is allocated and never used")]


def test_quiet_where_lowering_reported_an_error():
    text = _kernel(WRITE_X + '''    for i in range(16):
        B[i] = undefined_name[i]
''')
    codes = {d.code for d in tirkit.check(text)}
    assert "name/undefined" in codes and CODE not in codes


def test_the_quick_fix_removes_a_buffer_nothing_touches_and_the_kernel_computes_the_same():
    text = _kernel('''    for i in range(16):
        with T.sblock("b"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.exp(A[vi]) + T.float32(1)
''', allocs='temp = T.sblock_alloc_buffer((32, 32), "float32")  # scratch')
    result = tirkit.parse(text)
    (d,) = [d for d in tirkit.check(text) if d.code == CODE]
    (fix,) = text_fixes(result, CODE, "warning", d.span.line, d.span.column)
    assert fix.title == "Remove the unused allocation of `temp`"
    assert fix.edits == [(6, 1, 7, 1, "")]
    lines = text.split("\n")
    fixed = "\n".join(lines[:5] + lines[6:])
    assert "temp" not in fixed and tirkit.check(fixed) == []
    rng = np.random.default_rng(7)
    A = rng.standard_normal(16).astype("float32")
    outs = []
    for t in (text, fixed):
        B = np.zeros(16, "float32")
        run_reference(tirkit.parse(t).module["f"], [A, B])
        outs.append(B)
    np.testing.assert_allclose(outs[0], np.exp(A) + 1, rtol=1e-6)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_the_quick_fix_removes_loops_without_blocks_that_write_a_buffer_nothing_reads():
    text = _kernel('''    for i in range(16):
        X[i] = A[i] * T.float32(2)
    for i in range(16):
        B[i] = A[i] + T.float32(1)
''')
    result = tirkit.parse(text)
    (d,) = [d for d in tirkit.check(text) if d.code == CODE]
    (fix,) = text_fixes(result, CODE, "warning", d.span.line, d.span.column)
    assert (fix.title, fix.edits) == ("Remove `X` and the statements that write it",
                                      [(6, 1, 7, 1, ""), (7, 1, 9, 1, "")])


def _apply(text, edits):
    lines = text.split("\n")
    for ln, c, end_ln, end_c, new in sorted(edits, reverse=True):
        assert (c, end_c, new) == (1, 1, "")          # whole lines deleted
        del lines[ln - 1:end_ln - 1]
    return "\n".join(lines)


def test_the_quick_fix_removes_a_stage_nothing_reads_and_the_outputs_stay():
    text = SOFTMAX.format(norm="E[vi, vj]")
    (d,) = [d for d in tirkit.check(text) if d.code == CODE]
    (fix,) = text_fixes(tirkit.parse(text), CODE, "warning", d.span.line, d.span.column)
    assert fix.title == "Remove `Z` and block 'rowsum'"
    assert fix.edits == [(8, 1, 9, 1, ""), (19, 1, 25, 1, "")]
    fixed = _apply(text, fix.edits)
    assert "Z" not in fixed and "rowsum" not in fixed and tirkit.check(fixed) == []
    A = np.random.default_rng(8).standard_normal((8, 16)).astype("float32")
    outs = []
    for t in (text, fixed):
        P = np.zeros((8, 16), "float32")
        run_reference(tirkit.parse(t).module["softmax"], [A, P])
        outs.append(P)
    np.testing.assert_allclose(outs[0], np.exp(A - A.max(1, keepdims=True)), rtol=1e-6)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_no_stage_is_removed_that_does_something_else():
    # the block that accumulates Z also writes P: removing it would lose P
    text = SOFTMAX.format(norm="E[vi, vj]").replace(
        "            Z[vi] = Z[vi] + E[vi, vj]\n",
        "            Z[vi] = Z[vi] + E[vi, vj]\n            P[vi, vj] = E[vi, vj]\n")
    (d,) = [d for d in tirkit.check(text) if d.code == CODE]
    assert text_fixes(tirkit.parse(text), CODE, "warning", d.span.line, d.span.column) == []
    # a buffer read to compute another unused one: its own warning, no fix
    text = SOFTMAX.format(norm="A[vi, vj]")
    fixes = {d.span.line: text_fixes(tirkit.parse(text), CODE, "warning", d.span.line,
                                     d.span.column)
             for d in tirkit.check(text) if d.code == CODE}
    assert [(line, [f.title for f in fs]) for line, fs in sorted(fixes.items())] == [
        (6, []), (7, []), (8, ["Remove `Z` and block 'rowsum'"])]


def test_the_stage_fix_keeps_every_body_whole_and_every_name_defined():
    def fixes(text):
        return {d.span.line: [(f.title, f.edits) for f in text_fixes(
            tirkit.parse(text), CODE, "warning", d.span.line, d.span.column)]
            for d in tirkit.check(text) if d.code == CODE}
    # the whole loop around the stage goes: its body would be left empty
    assert fixes(_kernel('''    for k in range(4):
        for i in range(16):
            X[i] = A[i] * T.float32(2)
    for i in range(16):
        B[i] = A[i]
''')) == {6: [("Remove `X` and the statements that write it",
              [(6, 1, 7, 1, ""), (7, 1, 10, 1, "")])]}
    # a kernel that does nothing else, an allocation alone in its function, and a block
    # whose declared T.writes names the buffer: no fix
    assert fixes(_kernel('''    for i in range(16):
        X[i] = A[i] * T.float32(2)
''')) == {6: []}
    assert fixes(HEAD + "@T.prim_func(s_tir=True)\ndef f():\n"
                 "    X = T.alloc_buffer((4,), \"float32\")\n") == {6: []}
    assert fixes(_kernel('''    with T.sblock("outer"):
        T.reads(A[0:16])
        T.writes(X[0:16], B[0:16])
        for i in range(16):
            X[i] = A[i]
        for i in range(16):
            B[i] = A[i]
''')) == {6: []}
