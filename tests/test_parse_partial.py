"""`ParseResult.has_errors`: which kernels their reading left partial (the test the cost
model, the schedule actions and the tuner use before acting on a kernel)."""
import tirkit

MODULE = '''from tvm.script import ir as I
from tvm.script import tir as T


@I.ir_module
class Mod:
    @T.prim_func
    def good(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            B[i] = A[i] + T.float32(1)

    @T.prim_func
    def bad(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            B[i] = A[i] + T.nonesuch(1)
'''

KERNEL = '''from tvm.script import tir as T


@T.prim_func
def scale(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):  # COMMENT
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
'''


def partial(result):
    return {n: result.has_errors(f) for n, f in result.module.prim_funcs()}


def test_only_the_method_holding_the_error_is_partial():
    r = tirkit.parse(MODULE)
    assert [(d.code, d.span.line) for d in r.diagnostics] == [("name/undefined", 15)]
    assert partial(r) == {"good": False, "bad": True}


def test_a_bad_byte_in_a_comment_leaves_the_kernel_whole():
    data = KERNEL.encode().replace(b"COMMENT", b"caf\xe9")
    r = tirkit.parse(data)
    assert [(d.code, d.span.line) for d in r.diagnostics] == [("syntax", 7)]
    assert partial(r) == {"scale": False}
    # the same byte in the code is a syntax error there: the kernel is not read at all
    data = KERNEL.encode().replace(b'T.block("B")', b'T.block("B")\xe9')
    r = tirkit.parse(data)
    assert [(d.code, d.span.line) for d in r.diagnostics] == [("syntax", 7)]
    assert partial(r) == {}


def test_a_sound_file_has_no_partial_kernel():
    assert partial(tirkit.parse(KERNEL)) == {"scale": False}
    assert partial(tirkit.parse(MODULE.replace("T.nonesuch(1)", "T.float32(1)"))) == \
        {"good": False, "bad": False}
