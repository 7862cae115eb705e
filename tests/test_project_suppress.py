"""Suppression comments: each form, what they do not cover, `suppression/unused`, and the
line edit of the quick fix "Ignore CODE on this line"."""
import json

import tirkit
from tirkit.cli import main as cli
from tirkit.project.config import Config
from tirkit.project.pipeline import finish
from tirkit.project.suppress import add_ignore, find

OOB = '''from tvm.script import tir as T


@T.prim_func
def shifted(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi + 1]
'''

TWO = '''from tvm.script import tir as T


@T.prim_func
def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float64")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi + 1]
            B[vi] = T.float64(A[vi + 2])
'''


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def codes(text, warn=False, config=Config()):
    diags = finish(text, tirkit.check(text), config, warn_unused=warn)
    return [(d.line, d.code) for d in diags]


def on_line(text, n, comment):
    lines = text.split("\n")
    lines[n - 1] += comment
    return "\n".join(lines)


def test_without_suppressions_both_codes_are_reported():
    assert codes(TWO) == [(9, "bounds/out-of-bounds"), (9, "type/mismatch"),
                          (10, "bounds/out-of-bounds")]


def test_ignore_one_code_on_its_line_only():
    text = on_line(TWO, 9, "  # tirkit: ignore[bounds/out-of-bounds]")
    assert codes(text) == [(9, "type/mismatch"), (10, "bounds/out-of-bounds")]


def test_ignore_a_list_and_a_family():
    text = on_line(TWO, 9, "  # tirkit: ignore[type/mismatch, bounds/]")
    assert codes(text) == [(10, "bounds/out-of-bounds")]
    text = on_line(TWO, 9, "  # tirkit: ignore[bounds]")
    assert codes(text) == [(9, "type/mismatch"), (10, "bounds/out-of-bounds")]


def test_bare_ignore_silences_every_code_on_the_line():
    text = on_line(TWO, 9, "  # tirkit: ignore")
    assert codes(text) == [(10, "bounds/out-of-bounds")]
    # after another comment on the same line
    text = on_line(TWO, 10, "  # off by two  # tirkit: ignore")
    assert codes(text) == [(9, "bounds/out-of-bounds"), (9, "type/mismatch")]


def test_ignore_file_with_codes_and_bare():
    text = "# tirkit: ignore-file[bounds/out-of-bounds]\n" + TWO
    assert codes(text) == [(10, "type/mismatch")]
    text = "# tirkit: ignore-file\n" + TWO
    assert codes(text) == []


def test_a_string_is_not_a_suppression():
    text = TWO.replace("B[vi] = T.float64(A[vi + 2])",
                       'B[vi] = T.float64(A[vi + 2])\n            T.evaluate("# tirkit: ignore")')
    assert (10, "bounds/out-of-bounds") in codes(text)
    assert not find(text)


def test_unused_suppressions_are_reported_when_asked():
    text = on_line(TWO, 9, "  # tirkit: ignore[bounds/out-of-bounds, thread/launch-limit]")
    text = on_line(text, 5, "  # tirkit: ignore")
    assert (5, "suppression/unused") not in codes(text)           # not asked: nothing
    got = finish(text, tirkit.check(text), Config(), warn_unused=True)
    unused = [d for d in got if d.code == "suppression/unused"]
    assert [(d.line, d.severity) for d in unused] == [(5, "warning"), (9, "warning")]
    line9 = text.split("\n")[8]
    d9 = unused[1]
    assert line9[d9.span.column - 1:d9.span.end_column - 1] == "thread/launch-limit"
    # the used code of the same comment is not reported; the configuration can ask too
    assert "bounds/out-of-bounds" not in d9.message
    cfg = Config(warn_unused_ignores=True)
    assert [c for c in codes(text, warn=None, config=cfg) if c[1] == "suppression/unused"] \
        == [(5, "suppression/unused"), (9, "suppression/unused")]


def test_unused_report_from_the_command_line(tmp_path, capsys):
    f = write(tmp_path / "k.py", "# tirkit: ignore-file[thread/]\n" +
              on_line(OOB, 9, "  # tirkit: ignore[bounds/out-of-bounds]"))
    assert cli(["check", "--no-cache", "--isolated", "--format", "json", str(f)]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert cli(["check", "--no-cache", "--isolated", "--warn-unused-ignores", "--format",
                "json", str(f)]) == 0       # a warning: the exit code stays 0
    out = json.loads(capsys.readouterr().out)
    assert [(d["line"], d["code"], d["severity"]) for d in out] == \
        [(1, "suppression/unused", "warning")]


def test_add_ignore_appends_or_extends():
    assert add_ignore("    B[vi] = A[vi + 1]", "bounds/out-of-bounds") == \
        "    B[vi] = A[vi + 1]  # tirkit: ignore[bounds/out-of-bounds]"
    assert add_ignore("x = 1  # tirkit: ignore[type/mismatch]\r\n", "bounds/out-of-bounds") \
        == "x = 1  # tirkit: ignore[type/mismatch, bounds/out-of-bounds]\r\n"
    assert add_ignore("x = 1  # tirkit: ignore", "bounds/out-of-bounds") == \
        "x = 1  # tirkit: ignore"
    fixed = "\n".join(add_ignore(l, "bounds/out-of-bounds") if i == 8 else l
                      for i, l in enumerate(OOB.split("\n")))
    assert codes(OOB) == [(9, "bounds/out-of-bounds")] and codes(fixed) == []


def test_remove_unused_takes_the_pattern_or_the_whole_directive():
    from tirkit.project.suppress import remove_unused
    text = on_line(TWO, 9, "  # tirkit: ignore[bounds/out-of-bounds, thread/launch-limit]")
    text = on_line(text, 10, "  # off by two  # tirkit: ignore[loop-nest/]")
    text = "# tirkit: ignore-file[thread/]\n" + text
    diags = finish(text, tirkit.check(text), Config(), warn_unused=True)
    unused = [d for d in diags if d.code == "suppression/unused"]
    lines = text.split("\n")
    fixed = {}
    for d in unused:
        i = d.line - 1
        fixed[i] = remove_unused(fixed.get(i, lines[i]), d.span.column, d.span.end_column)
    assert [d.line for d in unused] == [1, 10, 11] and fixed[0] == ""
    assert fixed[9].endswith("A[vi + 1]  # tirkit: ignore[bounds/out-of-bounds]")
    assert fixed[10].endswith("A[vi + 2])  # off by two")
    clean = "\n".join(fixed.get(i, l) for i, l in enumerate(lines))
    assert [d for d in finish(clean, tirkit.check(clean), Config(), warn_unused=True)
            if d.code == "suppression/unused"] == []
    assert remove_unused("x = 1  # tirkit: ignore\r\n", 8, 24) == "x = 1\r\n"
