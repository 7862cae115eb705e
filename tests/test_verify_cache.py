"""The rule-result cache: an unchanged kernel gets its diagnostics from the cache, an edited
one is checked again, the target is part of the key, and concurrent checks agree."""
import threading

from tirkit import verify
from tirkit.script.parse import parse
from tirkit.verify import run_rules

TEXT = '''from tvm.script import tir as T


@T.prim_func
def oob(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi + 1]


@T.prim_func
def gpu(A: T.Buffer((4096,), "float32")):
    for t in T.thread_binding(2048, thread="threadIdx.x"):
        with T.block("w"):
            vt = T.axis.spatial(2048, t)
            A[vt] = T.float32(1)
'''


def errors(diags):
    return sorted((d.span.line, d.code, d.message) for d in diags if d.severity == "error")


def test_unchanged_function_comes_from_the_cache():
    verify.clear_result_cache()
    first = run_rules(parse(TEXT, "c.py"))
    assert {c for _, c, _ in errors(first)} == {"bounds/out-of-bounds", "thread/launch-limit"}
    calls = []
    rule = verify.RULES["bounds/out-of-bounds"] if "bounds/out-of-bounds" in verify.RULES \
        else next(r for r in verify.RULES.values() if "bounds/out-of-bounds" in r.codes)
    original = rule.fn
    rule.fn = lambda f, ctx: calls.append(f) or original(f, ctx)
    try:
        again = run_rules(parse(TEXT, "c.py"))
        assert calls == []                      # both kernels unchanged: no rule ran
        assert errors(again) == errors(first)
        edited = TEXT.replace("A[vi + 1]", "A[vi]")
        after = run_rules(parse(edited, "c.py"))
        assert len(calls) == 1                  # only the edited kernel was checked again
        assert {c for _, c, _ in errors(after)} == {"thread/launch-limit"}
    finally:
        rule.fn = original


def test_target_is_part_of_the_key():
    verify.clear_result_cache()
    result = parse(TEXT, "c.py")
    default = errors(run_rules(result))
    sm90 = errors(run_rules(result, target="cuda-sm90"))
    assert any(c == "thread/launch-limit" and "cuda-sm80" in m for _, c, m in default)
    assert any(c == "thread/launch-limit" and "cuda-sm90" in m for _, c, m in sm90)
    assert errors(run_rules(result)) == default


def test_concurrent_checks_agree():
    verify.clear_result_cache()
    want = errors(run_rules(parse(TEXT, "c.py")))
    got = []

    def work(n):
        text = TEXT + f"\n# {n}\n"
        for _ in range(5):
            verify.clear_result_cache() if n == 0 else None
            got.append(errors(run_rules(parse(text, "c.py"))))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 20 and all(g == want for g in got)
