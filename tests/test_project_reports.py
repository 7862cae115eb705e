"""`tirkit check` report formats (SARIF 2.1.0 validated against the OASIS schema, GitHub
workflow commands, statistics), exit codes, `fmt --diff`, and the cached, parallel
whole-tree run."""
import json
import subprocess
import sys

import jsonschema
import pytest

from conftest import EXAMPLES, ROOT, server_env
from tirkit.cli import main as cli
from tirkit.project import cache as result_cache

from test_project_suppress import OOB, TWO, write

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json")
                    .read_text(encoding="utf-8"))
EXAMPLE_FILES = sorted((EXAMPLES / "invalid").glob("*.py")) + \
    sorted((EXAMPLES / "valid").glob("*.py"))


def expected(path):
    """[(line, code)] of a shared example's `# expect:` marks."""
    out = []
    for i, line in enumerate(path.read_text().split("\n"), start=1):
        if "# expect:" in line:
            out.append((i, line.split("# expect:")[1].split()[0]))
    return out


def run(capsys, *args):
    rc = cli([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sarif_validates_for_every_shared_example(path, capsys):
    rc, out, _ = run(capsys, "check", "--no-cache", "--format", "sarif", path)
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA, cls=jsonschema.Draft4Validator)
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    results = run_["results"]
    # (the tensorize hint depends on this host's CPU features, so no example marks it)
    got = sorted((r["locations"][0]["physicalLocation"]["region"]["startLine"], r["ruleId"])
                 for r in results if r["ruleId"] != "tensorize/available")
    assert got == sorted(expected(path))
    assert rc == (1 if any(r["level"] == "error" for r in results) else 0)
    for r in results:
        rule = rules[r["ruleIndex"]]
        assert rule["id"] == r["ruleId"]
        assert len(rule["help"]["text"]) > 30          # the text of docs/diagnostics.md
        loc = r["locations"][0]["physicalLocation"]
        art = loc["artifactLocation"]        # relative to the run's root, or a file URI
        assert art.get("uriBaseId") == "%SRCROOT%" or art["uri"] == path.resolve().as_uri() \
            or art["uri"] == path.absolute().as_uri()


def test_sarif_related_locations_and_rule_help(capsys):
    path = EXAMPLES / "invalid" / "thread_extent_conflict.py"
    rc, out, _ = run(capsys, "check", "--no-cache", "--format", "sarif", path)
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA, cls=jsonschema.Draft4Validator)
    (res,) = log["runs"][0]["results"]
    assert res["ruleId"] == "thread/inconsistent-extent" and res["level"] == "error"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (11, 9)
    (rel,) = res["relatedLocations"]
    assert rel["physicalLocation"]["region"]["startLine"] == 7 and rel["message"]["text"]
    rule = log["runs"][0]["tool"]["driver"]["rules"][res["ruleIndex"]]
    docs = (ROOT / "docs" / "validation.md").read_text()
    assert rule["shortDescription"]["text"].split(" (")[0] in docs.replace("`", "")
    assert log["runs"][0]["columnKind"] == "unicodeCodePoints"


def test_github_annotations(tmp_path, capsys):
    f = write(tmp_path / "a,b.py", TWO)
    rc, out, _ = run(capsys, "check", "--no-cache", "--isolated", "--format", "github", f)
    lines = out.strip().split("\n")
    assert rc == 1 and len(lines) == 3
    first = lines[0]
    assert first.startswith("::error file=") and "a%2Cb.py" in first
    assert ",line=9,endLine=9,col=21,endColumn=30," in first
    assert "title=tirkit bounds/out-of-bounds::" in first and first.endswith(
        "[bounds/out-of-bounds]")
    assert lines[1].startswith("::warning ") and "type/mismatch" in lines[1]


def test_statistics_and_exit_zero(tmp_path, capsys):
    f = write(tmp_path / "k.py", TWO)
    rc, out, _ = run(capsys, "check", "--no-cache", "--isolated", "--statistics", f)
    assert rc == 1
    rows = [line.split() for line in out.strip().split("\n")]
    assert rows == [["2", "bounds/out-of-bounds", "error"], ["1", "type/mismatch", "warning"]]
    rc, out, _ = run(capsys, "check", "--no-cache", "--isolated", "--statistics",
                     "--format", "json", f)
    assert json.loads(out)[0] == {"code": "bounds/out-of-bounds", "severity": "error",
                                  "count": 2}
    rc, out, _ = run(capsys, "check", "--no-cache", "--isolated", "--exit-zero", f)
    assert rc == 0 and "[bounds/out-of-bounds]" in out


def test_exit_codes(tmp_path):
    good = write(tmp_path / "good.py", (EXAMPLES / "valid" / "matmul.py").read_text())
    bad = write(tmp_path / "bad.py", OOB)

    def code(*args):
        return subprocess.run([sys.executable, "-m", "tirkit.cli", *map(str, args)],
                              capture_output=True, text=True, env=server_env(),
                              timeout=120, cwd=tmp_path)
    assert code("check", "--no-cache", good).returncode == 0
    assert code("check", "--no-cache", bad).returncode == 1
    r = code("check", "--no-cache", "--format", "xml", good)
    assert r.returncode == 2 and "invalid choice" in r.stderr
    r = code("check", "--no-cache", "--statistics", "--format", "sarif", good)
    assert r.returncode == 2
    r = code("check", "--no-cache", "--jobs", "0", good)
    assert r.returncode == 2 and "--jobs" in r.stderr
    write(tmp_path / "tirkit.toml", "select = 3\n")
    r = code("check", "--no-cache", good)
    assert r.returncode == 2 and "tirkit.toml" in r.stderr and "Traceback" not in r.stderr


def test_fmt_diff_prints_and_writes_nothing(tmp_path, capsys):
    messy = (EXAMPLES / "valid" / "matmul.py").read_text().replace(
        "T.axis.remap", "T.axis.remap ", 1)
    if messy == (EXAMPLES / "valid" / "matmul.py").read_text():
        pytest.fail("the example changed: no remap to respace")
    f = write(tmp_path / "k.py", messy)
    rc, out, _ = run(capsys, "fmt", "--diff", f)
    assert rc == 1 and f.read_text() == messy
    assert out.startswith(f"--- {f}\n+++ {f} (formatted)\n")
    assert "-" + [l for l in messy.split("\n") if "remap " in l][0] in out.split("\n")
    rc, out, _ = run(capsys, "fmt", f)
    rc, out, _ = run(capsys, "fmt", "--diff", f)
    assert rc == 0 and out == ""


def test_cache_answers_unchanged_files_and_rechecks_changed_ones(tmp_path, capsys,
                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    tree = tmp_path / "src"
    for i in range(20):
        write(tree / f"m{i // 10}" / f"k{i}.py", OOB if i % 2 else
              (EXAMPLES / "valid" / "matmul.py").read_text())
    cache_dir = tmp_path / "cachedir"
    args = ["check", "--format", "json", "--cache-dir", cache_dir, tree]
    rc, first, _ = run(capsys, *args)
    assert rc == 1 and len(json.loads(first)) == 10
    assert (cache_dir / "CACHEDIR.TAG").exists()
    rc, second, err = run(capsys, "check", "--cache-dir", cache_dir, tree)
    assert "20 files checked (20 unchanged, from the cache), 10 errors" in err
    rc, again, _ = run(capsys, *args)
    assert again == first
    # an edited file is checked again, the others come from the cache
    write(tree / "m0" / "k1.py", (EXAMPLES / "valid" / "matmul.py").read_text())
    rc, _, err = run(capsys, "check", "--cache-dir", cache_dir, tree)
    assert "(19 unchanged, from the cache), 9 errors" in err
    # a configuration change invalidates every entry it touches
    write(tmp_path / "tirkit.toml", 'ignore = ["bounds/"]\n')
    rc, _, err = run(capsys, "check", "--cache-dir", cache_dir, tree)
    assert rc == 0 and "20 files checked, 0 errors" in err
    # --no-cache neither reads nor writes; tirkit clean removes the folder
    rc, _, err = run(capsys, "check", "--no-cache", tree)
    assert "from the cache" not in err and not (tmp_path / ".tirkit_cache").exists()
    rc, out, _ = run(capsys, "clean", "--cache-dir", cache_dir)
    assert rc == 0 and not cache_dir.exists()


def test_cache_key_covers_content_configuration_and_version():
    k = result_cache.key(b"x", "cfg")
    assert k == result_cache.key(b"x", "cfg")
    assert k != result_cache.key(b"y", "cfg") and k != result_cache.key(b"x", "cfg2")
    assert result_cache.version().startswith(__import__("tirkit").__version__ + "+")


def test_parallel_run_matches_a_serial_one(tmp_path, capsys):
    files = sorted((EXAMPLES / "invalid").glob("*.py")) * 2
    tree = tmp_path / "t"
    for i, p in enumerate(files):
        write(tree / f"{i:02d}_{p.name}", p.read_text())
    rc1, serial, _ = run(capsys, "check", "--no-cache", "--jobs", "1", "--format", "json",
                         tree)
    rc2, parallel, _ = run(capsys, "check", "--no-cache", "--jobs", "2", "--format", "json",
                           tree)
    assert len(files) >= 16 and rc1 == rc2 == 1
    assert json.loads(serial) == json.loads(parallel) and len(json.loads(serial)) >= 20


def test_sarif_paths_inside_the_folder_are_relative(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "sub dir" / "k.py", TWO)
    rc, out, _ = run(capsys, "check", "--no-cache", "--isolated", "--format", "sarif", ".")
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA, cls=jsonschema.Draft4Validator)
    run_ = log["runs"][0]
    arts = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in run_["results"]}
    assert arts == {"sub%20dir/k.py"}
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
    levels = sorted(r["level"] for r in run_["results"])
    assert levels == ["error", "error", "warning"]


def test_cache_entry_follows_the_params_file_the_script_names(tmp_path, capsys):
    import numpy as np
    from tirkit.script import params as P
    script = '''from tvm.script import tir as T
from tirkit.script import params
W = params.load("k.params")


@T.prim_func
def f():
    k = T.allocate_const(W["w"], "int16", [3])
    T.evaluate(0)
'''
    f = write(tmp_path / "k.py", script)
    cache_dir = tmp_path / "cache"
    args = ["check", "--isolated", "--format", "json", "--cache-dir", cache_dir, f]
    rc, out, _ = run(capsys, *args)
    assert [d["code"] for d in json.loads(out)] == ["constants/missing-file"]
    P.save(tmp_path / "k.params", {"w": np.arange(3, dtype=np.int16)})
    rc, out, _ = run(capsys, *args)
    assert rc == 0 and json.loads(out) == []           # not the cached missing-file report
    P.save(tmp_path / "k.params", {"w": np.arange(4, dtype=np.int16)})
    rc, out, _ = run(capsys, *args)
    assert [d["code"] for d in json.loads(out)] == ["constants/shape-mismatch"]
