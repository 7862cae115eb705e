"""Incremental analysis by function: an `@I.ir_module` class is read method by method, an
edit re-parses, re-lowers and re-checks only the method it touched, and a method that moved
(lines added or removed above it) keeps its rule results with shifted lines.  Every
incremental result equals a check of the same text with every cache cleared."""
import random

import tirkit
from tirkit import verify
from tirkit.script.parse import parse
from tirkit.syntax.chunks import find_chunks
from tirkit.verify import run_rules

HEADER = "from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n\n"


def method(i: int, n: int = 16, offset: int = 0) -> str:
    return f'''    # kernel {i}
    @T.prim_func
    def k{i}(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32")):
        for j in range({n}):
            with T.block("b"):
                vj = T.axis.spatial({n}, j)
                B[vj] = A[vj + {offset}] * T.float32(2)
'''


def module(n: int = 6, bad=(), name="Module") -> str:
    """A module of n kernels; those in `bad` read out of bounds."""
    body = "\n".join(method(i, offset=1 if i in bad else 0) for i in range(n))
    return f"{HEADER}@I.ir_module\nclass {name}:\n{body}"


def key(d):
    return (d.code, d.severity, d.message, tuple(d.span[:4]),
            tuple((tuple(sp[:4]), m) for sp, m in d.related))


def cold(text):
    tirkit.clear_caches()
    return [key(d) for d in tirkit.check(text, "m.py")]


def warm(text):
    return [key(d) for d in tirkit.check(text, "m.py")]


def line_of(text, needle):
    return text[:text.index(needle)].count("\n") + 1


def test_a_module_is_chunked_by_method():
    text = module(3)
    (chunk,), _ = find_chunks(text)
    assert chunk.kind == "ir_module" and chunk.name == "Module"
    assert chunk.method_names == ("k0", "k1", "k2")
    header, *methods = chunk.parts
    assert header.kind == "class" and (header.start_line, header.end_line) == (5, 6)
    assert [m.name for m in methods] == ["k0", "k1", "k2"]
    # each method starts after the one before it (its comment included) and is dedented
    assert methods[0].start_line == 7 and methods[1].start_line == methods[0].end_line + 1
    assert methods[1].text.lstrip("\n").startswith("# kernel 1\n@T.prim_func\ndef k1(")
    assert methods[2].end_line == text.rstrip("\n").count("\n") + 1
    assert all(m.col_offset == 4 for m in methods)


def test_a_class_with_other_statements_is_read_whole():
    text = module(2).replace("class Module:\n", 'class Module:\n    """doc"""\n')
    (chunk,), _ = find_chunks(text)
    assert chunk.parts == ()
    assert [n for n, _ in parse(text).module.functions if n] == ["k0", "k1"]


def test_edit_inside_one_method_relowers_only_that_one():
    tirkit.clear_caches()
    text = module(6)
    before = parse(text, "m.py").module.functions
    edited = text.replace("def k3(A: T.Buffer((16,)", "def k3(A: T.Buffer((32,)")
    after = parse(edited, "m.py").module.functions
    same = [a is b for (_, a), (_, b) in zip(before, after)]
    assert same == [True, True, True, False, True, True]
    assert after[3][1].buffer_map[0][1].shape[0].value == 32
    incremental = parse(edited, "m.py").module
    tirkit.clear_caches()
    fresh = parse(edited, "m.py").module
    assert tirkit.structural_equal(incremental, fresh)
    assert tirkit.to_script(incremental) == tirkit.to_script(fresh)
    assert [f.span for _, f in incremental.functions] == [f.span for _, f in fresh.functions]
    assert warm(edited) == cold(edited)


def test_rules_run_only_on_the_edited_method():
    verify.clear_result_cache()
    text = module(6, bad={1})
    run_rules(parse(text, "m.py"))
    rule = next(r for r in verify.RULES.values() if "bounds/out-of-bounds" in r.codes)
    calls = []
    original = rule.fn
    rule.fn = lambda f, ctx: calls.append(f.name) or original(f, ctx)
    try:
        edited = text.replace("A[vj + 0] * T.float32(2)\n\n    # kernel 4",
                              "A[vj + 1] * T.float32(2)\n\n    # kernel 4")
        assert edited != text
        diags = run_rules(parse(edited, "m.py"))
        assert calls == ["k3"]
        reads = [i for i, ln in enumerate(edited.split("\n"), 1) if "A[vj + 1]" in ln]
        assert len(reads) == 2
        assert sorted(d.span.line for d in diags if d.code == "bounds/out-of-bounds") == reads
    finally:
        rule.fn = original


def test_lines_added_above_a_method_shift_its_diagnostics():
    verify.clear_result_cache()
    text = module(6, bad={4})
    first = tirkit.check(text, "m.py")
    assert [(d.code, d.span.line) for d in first] == [
        ("bounds/out-of-bounds", line_of(text, "A[vj + 1]"))]
    rule = next(r for r in verify.RULES.values() if "bounds/out-of-bounds" in r.codes)
    calls = []
    original = rule.fn
    rule.fn = lambda f, ctx: calls.append(f.name) or original(f, ctx)
    try:
        # three lines above the module: every method moves down, none changes
        moved = text.replace("@I.ir_module", "# one\n# two\n\n@I.ir_module")
        diags = tirkit.check(moved, "m.py")
        assert calls == []                      # rule results reused, lines shifted
        assert [(d.code, d.span.line) for d in diags] == [
            ("bounds/out-of-bounds", first[0].span.line + 3)]
        assert [key(d) for d in diags] == cold(moved)
        # and the module's functions carry their new places
        spans = [f.span.line for _, f in parse(moved, "m.py").module.functions]
        assert spans == [s + 3 for s in (f.span.line for _, f in parse(text, "m.py")
                                         .module.functions)]
    finally:
        rule.fn = original


def test_a_syntax_error_in_one_method_is_reported_where_it_is():
    text = module(4)
    broken = text.replace("for j in range(16):\n            with T.block(\"b\"):\n"
                          "                vj = T.axis.spatial(16, j)\n"
                          "                B[vj] = A[vj + 0] * T.float32(2)\n\n    # kernel 2",
                          "for j in range(16:\n            with T.block(\"b\"):\n"
                          "                vj = T.axis.spatial(16, j)\n"
                          "                B[vj] = A[vj + 0] * T.float32(2)\n\n    # kernel 2")
    assert broken != text
    diags = tirkit.check(broken, "m.py")
    assert {d.code for d in diags} == {"syntax"}
    assert line_of(broken, "range(16:") in {d.span.line for d in diags}
    assert warm(broken) == cold(broken)
    assert warm(text) == cold(text) == []


def test_calls_between_methods_follow_the_method_names():
    text = module(3).replace("B[vj] = A[vj + 0] * T.float32(2)\n\n    # kernel 1",
                             "B[vj] = A[vj + 0] * T.float32(2)\n"
                             "        Module.k2(A.data, B.data)\n\n    # kernel 1", 1)
    assert warm(text) == cold(text) == []
    renamed = text.replace("def k2(", "def k9(")
    got = warm(renamed)
    assert [c for c, *_ in got] == ["name/undefined"] and got == cold(renamed)


def test_random_edits_agree_with_a_cold_check():
    rng = random.Random(7)
    text = module(8, bad={2, 5})
    tirkit.clear_caches()
    warm(text)
    for _ in range(25):
        lines = text.split("\n")
        i = rng.randrange(4, len(lines) - 1)
        op = rng.choice(["blank", "comment", "delete", "extent", "offset"])
        if op == "blank":
            lines.insert(i, "")
        elif op == "comment":
            lines.insert(i, " " * rng.choice([0, 4, 8]) + "# note")
        elif op == "delete" and not lines[i].strip():
            del lines[i]
        elif op == "extent":
            lines = text.replace("(16,)", "(32,)", 1).split("\n")
        elif op == "offset" and "vj + " in lines[i]:
            lines[i] = lines[i].replace("vj + 0", "vj + 1").replace("vj + 1]", "vj + 0]")
        text = "\n".join(lines)
        assert warm(text) == cold(text), op
        warm(text)
