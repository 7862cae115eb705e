"""`from tirkit.script import tir as T`: kernels built into IR when their module is imported."""
import importlib.util
import sys
import textwrap

import pytest

import tirkit
from tirkit.ir.stmt import IRModule, PrimFunc

KERNEL = '''
@T.prim_func
def add_one(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32")):
    for i in range(N):
        with T.block("B"):
            vi = T.axis.spatial(N, i)
            B[vi] = A[vi] + T.float32(1)
'''


def _import(tmp_path, name, source, register=False):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    if register:                  # as `import name` does
        sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(name, None)
    return mod, path


def test_prim_func_is_built_at_import(tmp_path):
    mod, _ = _import(tmp_path, "k1", "from tirkit.script import tir as T\nN = 32\n" + KERNEL)
    f = mod.add_one
    assert isinstance(f, PrimFunc)
    assert f.name == "add_one"
    # the same program as the text read by tirkit.parse (module constants substituted)
    expected = tirkit.parse("from tvm.script import tir as T\n" + KERNEL.replace("N", "32"))
    assert tirkit.structural_equal(f, expected.module.functions[0][1])
    assert [d.value for d in f.buffer_map[0][1].shape] == [32]
    assert "T.axis.spatial(32, i)" in tirkit.to_script(f)


def test_decorator_with_arguments_and_another_alias(tmp_path):
    src = '''
    from tirkit.script import tir as Tx

    def make(n):
        @Tx.prim_func(private=True)
        def scale(A: Tx.Buffer((n,), "float32")):
            for i in range(n):
                A[i] = A[i] * Tx.float32(2)
        return scale

    small, big = make(4), make(64)
    '''
    mod, _ = _import(tmp_path, "k2", src)
    assert mod.small.private is True
    assert [d.value for d in mod.small.buffer_map[0][1].shape] == [4]
    assert [d.value for d in mod.big.buffer_map[0][1].shape] == [64]
    assert not tirkit.structural_equal(mod.small, mod.big)


@pytest.mark.parametrize("register", [False, True])
def test_ir_module_class_is_built_with_its_functions(tmp_path, register):
    src = '''
    from tirkit.script import ir as I
    from tirkit.script import tir as T


    @I.ir_module
    class Module:
        @T.prim_func
        def fill(A: T.Buffer((8,), "float32")):
            for i in range(8):
                A[i] = T.float32(0)

        @T.prim_func
        def main(A: T.Buffer((8,), "float32")):
            Module.fill(A.data)
    '''
    mod, _ = _import(tmp_path, f"k3{int(register)}", src, register)
    m = mod.Module
    assert isinstance(m, IRModule)
    assert m.name == "Module"
    assert [name for name, _ in m.functions] == ["fill", "main"]
    assert "Module.fill(A.data)" in tirkit.to_script(m)


def test_errors_raise_with_diagnostics_in_the_users_file(tmp_path):
    src = '''
    from tirkit.script import tir as T


    @T.prim_func
    def broken(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = Q[i]
    '''
    with pytest.raises(tirkit.TirkitError) as info:
        _import(tmp_path, "k4", src)
    (d,) = info.value.diagnostics
    assert d.code == "name/undefined"
    path = tmp_path / "k4.py"
    line = path.read_text().split("\n")[d.span.line - 1]
    assert line[d.span.column - 1:d.span.end_column - 1] == "Q"
    assert d.span.file == str(path)


def test_syntax_error_in_a_kernel_raises_tirkit_error(tmp_path):
    src = '''
    from tirkit.script import tir as T


    @T.prim_func
    def broken(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = A[i] if
    '''
    # Python itself rejects the file before the decorator runs: that is Python's error
    with pytest.raises(SyntaxError):
        _import(tmp_path, "k5", src)
    src = src.replace("A[i] = A[i] if", "A[i, i] = A[i]")
    with pytest.raises(tirkit.TirkitError) as info:
        _import(tmp_path, "k6", src)
    assert [d.code for d in info.value.diagnostics] == ["type/mismatch"]
