"""Definitions that moved (lines added or removed above them) keep their parse, lowering and
rule results: nothing is lowered again, and every span (IR nodes, lowering and rule
diagnostics, related places) and the printed script equal a parse of the new text with every
cache cleared."""
import dataclasses
import threading

import tirkit
from tirkit.diagnostics import Span
from tirkit.ir.shift import moved_function, shift_lines
from tirkit.script.parse import lowering_counts, parse

HEADER = "from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n\n"


def method(i: int, read: str = "A[vj]") -> str:
    return f'''    # kernel {i}
    @T.prim_func
    def k{i}(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for j in range(16):
            with T.block("b"):
                vj = T.axis.spatial(16, j)
                B[vj] = {read} * T.float32(2)
'''


# k2 reads out of bounds (a rule diagnostic), k4 names an undefined buffer (a lowering
# diagnostic), k5 defines its iterator twice (a lowering diagnostic with a related place)
READS = {2: "A[vj + 1]", 4: "C[vj]"}


def module(n: int = 6) -> str:
    methods = [method(i, READS.get(i, "A[vj]")) for i in range(n)]
    methods[5] = methods[5].replace("vj = T.axis.spatial(16, j)\n",
                                    "vj = T.axis.spatial(16, j)\n"
                                    "                vj = T.axis.spatial(16, j)\n")
    return HEADER + "@I.ir_module\nclass Module:\n" + "\n".join(methods)


def spans(node) -> list:
    """Every span under node, in one fixed order: (class, field, span)."""
    out, seen = [], set()

    def go(x, owner, name):
        if isinstance(x, Span):
            out.append((owner, name, tuple(x)))
        elif isinstance(x, (tuple, list)):
            for y in x:
                go(y, owner, name)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            if id(x) in seen:
                return
            seen.add(id(x))
            for f in dataclasses.fields(x):
                go(getattr(x, f.name), type(x).__name__, f.name)
    go(node, "", "")
    return out


def dkey(d):
    return (d.code, d.severity, d.message, tuple(d.span),
            tuple((tuple(sp), m) for sp, m in d.related))


def cold(text):
    tirkit.clear_caches()
    r = parse(text, "m.py")
    return r, [dkey(d) for d in tirkit.check(text, "m.py")]


def assert_like_cold(text):
    warm_result = parse(text, "m.py")
    warm_diags = [dkey(d) for d in tirkit.check(text, "m.py")]
    fresh, fresh_diags = cold(text)
    assert warm_diags == fresh_diags
    assert [dkey(d) for d in warm_result.diagnostics] == [dkey(d) for d in fresh.diagnostics]
    a, b = warm_result.module, fresh.module
    assert [n for n, _ in a.functions] == [n for n, _ in b.functions]
    for (name, f), (_, g) in zip(a.functions, b.functions):
        assert spans(f) == spans(g), name
        assert len(spans(f)) > 10
    assert tirkit.structural_equal(a, b)
    assert tirkit.to_script(a) == tirkit.to_script(b)
    return warm_result


def test_the_test_module_has_every_kind_of_diagnostic():
    _, diags = cold(module())
    codes = {c for c, *_ in diags}
    assert {"bounds/out-of-bounds", "name/undefined", "well-formed/redefinition"} <= codes
    assert any(related for *_, related in diags)


def test_lines_added_above_a_module_move_every_method_without_lowering():
    text = module()
    tirkit.clear_caches()
    before = parse(text, "m.py")
    tirkit.check(text, "m.py")
    counts = lowering_counts()
    places = [spans(f) for _, f in before.module.functions]
    moved = "# one\n# two\n\n" + text
    after = parse(moved, "m.py")
    now = lowering_counts()
    assert now["lowered"] == counts["lowered"]            # nothing lowered again
    assert now["moved"] == counts["moved"] + 6            # each method moved once
    for (_, f), (_, g) in zip(before.module.functions, after.module.functions):
        assert f is not g                                  # cached IR is copied, not changed
        assert g.span.line == f.span.line + 3
        assert [s[2][0] + 3 for s in spans(f)] == [s[2][0] for s in spans(g)]
    assert [spans(f) for _, f in before.module.functions] == places   # left as they were
    assert_like_cold(moved)


def test_lines_removed_above_a_module_and_between_methods():
    text = "# one\n# two\n# three\n" + module()
    parse(text, "m.py")
    tirkit.check(text, "m.py")
    fewer = text.replace("# one\n# two\n", "")
    assert_like_cold(fewer)
    # a line added inside k1 (a blank line in its body): k1 is lowered again, k2..k5 move
    parse(fewer, "m.py")
    counts = lowering_counts()
    inside = fewer.replace("    def k1(", "    def k1(\n", 1)
    got = parse(inside, "m.py")
    now = lowering_counts()
    assert now["lowered"] == counts["lowered"] + 1
    assert now["moved"] == counts["moved"] + 4
    assert [n for n, _ in got.module.functions] == [f"k{i}" for i in range(6)]
    assert_like_cold(inside)


def test_moved_top_level_functions_and_an_unchanged_place_keeps_the_very_objects():
    text = HEADER + "\n\n".join(method(i, READS.get(i, "A[vj]")).replace("\n    ", "\n")
                                .lstrip(" ") for i in range(4))
    first = parse(text, "m.py")
    again = parse(text, "m.py")
    assert all(f is g for (_, f), (_, g) in zip(first.module.functions,
                                                 again.module.functions))
    counts = lowering_counts()
    moved = "\n\n" + text
    assert_like_cold(moved)
    tirkit.check(text, "m.py")
    tirkit.check(moved, "m.py")                    # caches warm again: a move, no lowering
    assert lowering_counts()["lowered"] - counts["lowered"] == 4     # by the cold parses


def test_random_moves_agree_with_a_cold_parse():
    import random
    rng = random.Random(3)
    text = module()
    tirkit.check(text, "m.py")
    for _ in range(8):
        lines = text.split("\n")
        i = rng.randrange(0, 8)
        if rng.random() < 0.5 or not lines[i].startswith("#"):
            lines.insert(i, "# note")
        else:
            del lines[i]
        text = "\n".join(lines)
        assert_like_cold(text)


def test_moves_from_several_threads_agree_with_a_cold_parse():
    base = module()
    versions = ["# x\n" * k + base for k in range(6)]
    expected = {}
    for v in versions:
        r, diags = cold(v)
        expected[v] = ([spans(f) for _, f in r.module.functions], diags)
    parse(base, "m.py")
    got, errors = {}, []

    def work(v):
        try:
            r = parse(v, "m.py")
            got[v] = ([spans(f) for _, f in r.module.functions],
                      [dkey(d) for d in tirkit.check(v, "m.py")])
        except Exception as e:      # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(v,)) for v in versions * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert got == expected


def test_shift_lines_keeps_sharing_and_leaves_the_input_alone():
    r = parse(module(), "m.py")
    f = r.module.functions[0][1]
    g = shift_lines(f, 5)
    assert shift_lines(f, 0) is f
    assert g.params[0] is not f.params[0]
    assert g.buffer_map[0][0] is g.params[0]          # one variable, used where it was
    assert [s[2][0] - 5 for s in spans(g)] == [s[2][0] for s in spans(f)]
    assert [s[2][1] for s in spans(g)] == [s[2][1] for s in spans(f)]     # columns stay
    assert tirkit.structural_equal(f, g)


def test_a_moved_function_is_copied_once_whichever_thread_reads_it_first():
    r = parse(module(), "m.py")
    f = r.module.functions[3][1]
    for _ in range(5):
        g = moved_function(f, 7)
        seen, errors = [], []
        start = threading.Barrier(8)

        def read(field):
            try:
                start.wait()
                seen.append((field, getattr(g, field)))
            except Exception as e:      # noqa: BLE001 - reported below
                errors.append(e)
        threads = [threading.Thread(target=read, args=(name,))
                   for name in ("body", "params", "buffer_map", "attrs") * 2]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        for field, value in seen:
            assert value is getattr(g, field)           # one copy, read by every thread
        assert g.buffer_map[0][0] is g.params[0]
        assert [s[2][0] - 7 for s in spans(g)] == [s[2][0] for s in spans(f)]


def test_moved_twice_before_it_is_read():
    base = module()
    parse(base, "m.py")
    one = "# a\n" + base
    two = "# a\n# b\n# c\n" + base
    first = parse(one, "m.py")                      # nothing read
    second = parse(two, "m.py")                     # moved again, nothing read
    got_two = [spans(f) for _, f in second.module.functions]
    got_one = [spans(f) for _, f in first.module.functions]
    assert got_two == [spans(f) for _, f in cold(two)[0].module.functions]
    assert got_one == [spans(f) for _, f in cold(one)[0].module.functions]


def test_a_missing_attribute_of_a_moved_function_is_still_missing():
    f = parse(module(), "m.py").module.functions[0][1]
    g = moved_function(f, 2)
    assert getattr(g, "no_such_field", None) is None
    assert g.name == f.name and g.span.line == f.span.line + 2
    assert tirkit.structural_equal(g, f)
