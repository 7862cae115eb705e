"""The module-calls rule: a call `Module.f(...)` whose arguments do not fit f's parameters
(their count, a value where f takes a buffer's data or the reverse, a pointer to elements of
another type, a scalar of another dtype), reported at the argument while the user types;
TVM's parser takes such a call as it comes and its code generator fails on it, or not at all."""
import tirkit

HEAD = "from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n\n"
TEXT = HEAD + '''@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int32")):
        for i in range(16):
            CALL

    @T.prim_func(private=True)
    def put(dst: T.handle("float32"), i: T.int32, v: T.float32):
        D = T.decl_buffer((16,), "float32", data=dst)
        D[i] = v

    @T.prim_func(private=True)
    def rows(X: T.Buffer((16,), "float32"), n: T.int32):
        X[n] = T.float32(0)
'''
LINE = 10


def check(call):
    text = TEXT.replace("CALL", call)
    diags = tirkit.check(text, "m.py")
    line = text.split("\n")[LINE - 1]
    return [(d.severity, d.code, line[d.span.column - 1:d.span.end_column - 1], d.message)
            for d in diags if d.span.line == LINE]


def test_calls_that_fit_are_left_alone():
    for call in ("Module.put(A.data, i, A[i])", "Module.put(T.address_of(A[i]), 0, A[i])",
                 "Module.rows(A.data, i)"):
        assert check(call) == [], call


def test_a_wrong_count_of_arguments():
    (d,) = check("Module.put(A.data, i)")
    assert d[:3] == ("error", "type/mismatch", "Module.put(A.data, i)")
    assert d[3] == "'put' takes 3 arguments (dst, i, v), got 2"


def test_a_value_where_a_buffer_is_taken_and_the_reverse():
    (d,) = check("Module.put(A[i], i, A[i])")
    assert d[:3] == ("error", "type/mismatch", "A[i]")
    assert d[3] == ("'put' takes the data of a buffer as 'dst' (`A.data` or "
                    "`T.address_of(A[i])`), not a float32 value")
    (d,) = check("Module.put(A.data, B.data, A[i])")
    assert d[:3] == ("error", "type/mismatch", "B.data")
    assert d[3] == "'put' takes 'i' as a value of int32, not a pointer"


def test_a_pointer_to_elements_of_another_type():
    (d,) = check("Module.rows(B.data, i)")
    assert d[:3] == ("error", "type/mismatch", "B.data")
    assert d[3] == ("'rows' reads 'X' as float32 elements, but the pointer is to int32 "
                    "elements: their bits would be read as float32")
    (d,) = check("Module.put(T.address_of(B[i]), 0, A[i])")
    assert d[:3] == ("error", "type/mismatch", "T.address_of(B[i])")


def test_a_scalar_of_another_dtype_is_an_error():
    # TVM 0.27 passes the value unconverted and its LLVM build fails ("Call parameter type
    # does not match function signature"), for a loaded value and a literal alike
    (d,) = check("Module.put(A.data, i, B[i])")
    assert d[:3] == ("error", "type/mismatch", "B[i]")
    assert d[3] == ("'put' takes 'v' as float32, and B[i] is int32: TVM passes the value "
                    "unconverted and its build fails (write T.Cast(\"float32\", ...))")
    (d,) = check("Module.put(A.data, i, 1)")
    assert d[:3] == ("error", "type/mismatch", "1")
    assert check("Module.put(A.data, i, T.Cast(\"float32\", B[i]))") == []


def test_the_callee_is_the_related_location():
    text = TEXT.replace("CALL", "Module.put(A.data, i)")
    (d,) = [x for x in tirkit.check(text, "m.py") if x.span.line == LINE]
    ((span, note),) = d.related
    assert (span.line, note) == (13, "'put' is defined here")


def test_a_changed_signature_checks_an_unchanged_caller_again():
    """The caller's results are cached by its definition, keyed by its siblings' signatures."""
    text = TEXT.replace("CALL", "Module.put(A.data, i, A[i])")
    assert [d for d in tirkit.check(text, "m.py") if d.span.line == LINE] == []
    changed = text.replace("def put(dst: T.handle(\"float32\"), i: T.int32, v: T.float32)",
                           "def put(dst: T.handle(\"float32\"), i: T.int32)").replace(
        "D[i] = v", "D[i] = T.float32(1)")
    (d,) = [x for x in tirkit.check(changed, "m.py") if x.span.line == LINE]
    assert d.message == "'put' takes 2 arguments (dst, i), got 3"


def test_a_string_return_annotation_is_an_error_at_the_annotation():
    # TVM's parser wants a type there (`-> T.float32`) and stops on a string; the call
    # keeps its default int32 type rather than one the function does not declare
    text = HEAD + '''@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.Cast("float32", Module.half(i))

    @T.prim_func(private=True)
    def half(x: T.int32) -> "float32":
        T.ret(T.Cast("float32", x) * T.float32(0.5))
'''
    diags = [d for d in tirkit.check(text, "m.py") if d.severity == "error"]
    (d,) = diags
    line = text.split("\n")[d.span.line - 1]
    assert (d.code, line[d.span.column - 1:d.span.end_column - 1]) == ("type/mismatch",
                                                                      '"float32"')
    assert d.message == ("a return annotation is a type (`-> T.float32`); TVM does not "
                         "read a string there")


def test_a_scalar_of_another_dtype_has_a_fix_that_converts_it():
    """The quick fix wraps the argument as written in T.Cast to the parameter's dtype; the
    fixed call checks clean and computes what the engines computed by converting."""
    import numpy as np
    from tirkit.codegen.interp import run_reference
    from tirkit.verify.fixes import text_fixes
    text = TEXT.replace("CALL", "Module.put(A.data, i, B[i] * 2)")
    (d,) = [x for x in tirkit.check(text, "m.py") if x.span.line == LINE]
    parsed = tirkit.parse(text, "m.py")
    (fix,) = text_fixes(parsed, d.code, d.severity, d.span.line, d.span.column)
    assert fix.title == "Convert `B[i] * 2` to float32 with T.Cast"
    (ln, col, end_ln, end_col, new), = fix.edits
    lines = text.split("\n")
    row = lines[ln - 1]
    assert (ln, end_ln, row[col - 1:end_col - 1]) == (LINE, LINE, "B[i] * 2")
    assert new == 'T.Cast("float32", B[i] * 2)'
    lines[ln - 1] = row[:col - 1] + new + row[end_col - 1:]
    fixed = "\n".join(lines)
    assert [x for x in tirkit.check(fixed, "m.py") if x.severity == "error"] == []
    mod = tirkit.parse(fixed).module
    rng = np.random.default_rng(3)
    A = rng.standard_normal(16).astype("float32")
    B = rng.integers(-50, 50, 16).astype("int32")
    run_reference(mod["main"], [A, B], module=mod)
    np.testing.assert_array_equal(A, (B * 2).astype("float32"))
    # another mismatch of the same code (a pointer for a scalar) has no such fix
    text = TEXT.replace("CALL", "Module.put(A.data, B.data, A[i])")
    (d,) = [x for x in tirkit.check(text, "m.py") if x.span.line == LINE]
    assert text_fixes(tirkit.parse(text, "m.py"), d.code, d.severity, d.span.line,
                      d.span.column) == []
