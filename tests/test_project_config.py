"""Project configuration: discovery by walking up, precedence (command line over file over
defaults), select/ignore specificity, per-file ignores, excludes, errors, `tirkit config`,
and `constants.inline-threshold` for `tirkit fmt`."""
import json
import os

import pytest

from tirkit.cli import main as cli
from tirkit.project.config import Config, ConfigError, find_config_file, load, resolve

from test_project_suppress import OOB, TWO, write



def check_json(capsys, *args):
    rc = cli(["check", "--format", "json", "--no-cache", *map(str, args)])
    out = capsys.readouterr().out
    return rc, sorted((os.path.basename(d["file"]), d["line"], d["code"])
                      for d in json.loads(out))


def test_discovery_walks_up_and_skips_pyproject_without_tool_table(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.tirkit]\nignore = ["name/"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "x"\n')
    f = write(tmp_path / "pkg" / "sub" / "k.py", OOB)
    assert find_config_file(f) == str(tmp_path / "pyproject.toml")
    # in one folder tirkit.toml wins over pyproject.toml; the nearest folder wins
    write(tmp_path / "pkg" / "tirkit.toml", 'select = ["bounds/"]\n')
    assert find_config_file(f) == str(tmp_path / "pkg" / "tirkit.toml")
    cfg = resolve(f)
    assert cfg.select == ("bounds/",) and cfg.ignore == ()
    assert cfg.root == str(tmp_path / "pkg")


def test_defaults_without_a_file(tmp_path):
    f = write(tmp_path / "k.py", OOB)
    cfg = Config()
    if find_config_file(f) is None:
        assert resolve(f) == cfg
    assert cfg.enabled("bounds/out-of-bounds") and cfg.inline_threshold == 64


def test_select_ignore_specificity():
    cfg = Config(select=("thread/race", "bounds/"), ignore=("thread/",))
    assert cfg.enabled("thread/race")            # the exact code beats the family
    assert not cfg.enabled("thread/launch-limit")
    assert cfg.enabled("bounds/out-of-bounds")
    assert not cfg.enabled("name/undefined")     # not selected
    cfg = Config(select=("all",), ignore=("bounds/out-of-bounds", "loop-nest"))
    assert not cfg.enabled("bounds/out-of-bounds")
    assert not cfg.enabled("loop-nest/non-affine")
    assert cfg.enabled("name/undefined")


def test_file_then_cli_precedence(tmp_path, capsys):
    f = write(tmp_path / "k.py", TWO)
    rc, found = check_json(capsys, "--isolated", f)
    assert rc == 1 and found == [("k.py", 9, "bounds/out-of-bounds"), ("k.py", 9, "type/mismatch"),
                                 ("k.py", 10, "bounds/out-of-bounds")]
    write(tmp_path / "pyproject.toml", '[tool.tirkit]\nignore = ["bounds/"]\n')
    rc, found = check_json(capsys, f)
    assert rc == 0 and found == [("k.py", 9, "type/mismatch")]   # the file over the defaults
    rc, found = check_json(capsys, "--select", "bounds/out-of-bounds", f)
    assert rc == 1 and found == [("k.py", 9, "bounds/out-of-bounds"),
                                 ("k.py", 10, "bounds/out-of-bounds")]   # exact beats family
    rc, found = check_json(capsys, "--select", "bounds/,type", "--ignore", "type/mismatch", f)
    assert found == [] and rc == 0            # --select replaces, --ignore adds to the file's
    write(tmp_path / "pyproject.toml", '[tool.tirkit]\nselect = ["bounds/"]\n')
    rc, found = check_json(capsys, f)
    assert [c for _, _, c in found] == ["bounds/out-of-bounds"] * 2
    rc, found = check_json(capsys, "--select", "type/", f)
    assert found == [("k.py", 9, "type/mismatch")]        # the command line over the file
    rc, found = check_json(capsys, "--isolated", "--ignore", "type/mismatch", f)
    assert [c for _, _, c in found] == ["bounds/out-of-bounds"] * 2


SMEM = '''from tvm.script import tir as T


@T.prim_func
def k(A: T.Buffer((256, 200), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(200, thread="threadIdx.x"):
            with T.block("B"):
                S = T.alloc_buffer((256, 200), "float32", scope="shared.dyn")
                for i in range(256):
                    S[i, tx] = A[i, tx]
                for i in range(256):
                    A[i, tx] = S[i, tx] + T.float32(1)
'''


def test_target_from_file_and_command_line(tmp_path, capsys):
    f = write(tmp_path / "k.py", SMEM)          # 200 KB: over sm80's 163 KB, under sm90's
    limit = [("k.py", 9, "thread/shared-memory-limit")]
    assert check_json(capsys, "--isolated", f) == (1, limit)        # default cuda-sm80
    write(tmp_path / "tirkit.toml", 'target = "cuda-sm90"\n')
    assert check_json(capsys, f) == (0, [])                         # the file's target
    assert check_json(capsys, "--target", "cuda-sm80", f) == (1, limit)   # the option's
    assert resolve(f).target == "cuda-sm90" and resolve(f, target="llvm").target == "llvm"


def test_per_file_ignores(tmp_path, capsys):
    write(tmp_path / "pyproject.toml",
          '[tool.tirkit.per-file-ignores]\n"tests/**" = ["bounds/"]\n"legacy_*.py" = ["all"]\n')
    a = write(tmp_path / "src" / "k.py", OOB)
    b = write(tmp_path / "tests" / "deep" / "k.py", OOB)
    c = write(tmp_path / "src" / "legacy_k.py", OOB)
    rc, found = check_json(capsys, tmp_path)
    assert found == [("k.py", 9, "bounds/out-of-bounds")]
    cfg = resolve(a)
    assert cfg.file_ignores(b) == ("bounds/",) and cfg.file_ignores(a) == ()
    assert cfg.file_ignores(c) == ("all",)


def test_extend_exclude_skips_folders_and_files(tmp_path, capsys):
    write(tmp_path / "tirkit.toml", 'extend-exclude = ["generated", "src/old_*.py"]\n')
    write(tmp_path / "src" / "k.py", OOB)
    write(tmp_path / "src" / "old_k.py", OOB)
    write(tmp_path / "generated" / "k.py", OOB)
    write(tmp_path / ".hidden" / "k.py", OOB)
    rc = cli(["check", "--no-cache", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("1 file checked")


@pytest.mark.parametrize("text, words", [
    ('[tool.tirkit]\nselct = ["bounds/"]\n', "unknown key 'selct'"),
    ('[tool.tirkit]\nselect = ["Bounds"]\n', "not a code"),
    ('[tool.tirkit]\ntarget = "tpu"\n', "unknown target"),
    ('[tool.tirkit]\nselect = [\n', "not valid TOML"),
    ('[tool.tirkit.constants]\ninline-threshold = -1\n', "inline-threshold"),
])
def test_configuration_errors_exit_2_with_the_file_named(tmp_path, capsys, text, words):
    write(tmp_path / "pyproject.toml", text)
    f = write(tmp_path / "k.py", OOB)
    with pytest.raises(ConfigError, match=words):
        load(str(tmp_path / "pyproject.toml"))
    assert cli(["check", "--no-cache", str(f)]) == 2
    err = capsys.readouterr().err
    assert words in err and "pyproject.toml" in err and "Traceback" not in err


def test_tirkit_config_prints_the_resolved_configuration(tmp_path, capsys):
    write(tmp_path / "pyproject.toml", '[tool.tirkit]\ntarget = "llvm"\nintrinsics = ["intrin"]'
          '\n[tool.tirkit.constants]\ninline-threshold = 8\n'
          '[tool.tirkit.per-file-ignores]\n"t/*.py" = ["bounds/"]\n')
    f = write(tmp_path / "a" / "k.py", OOB)
    assert cli(["config", "--format", "json", str(f)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["source"] == str(tmp_path / "pyproject.toml")
    assert d["target"] == "llvm" and d["constants"]["inline-threshold"] == 8
    assert d["intrinsics"] == [str(tmp_path / "intrin")]
    assert d["cache-dir"] == str(tmp_path / ".tirkit_cache")
    assert cli(["config", str(f)]) == 0
    out = capsys.readouterr().out
    assert 'target = "llvm"' in out and "inline-threshold = 8" in out
    # the printed configuration is a tirkit.toml that means the same
    write(tmp_path / "copy" / "tirkit.toml", out)
    again = load(str(tmp_path / "copy" / "tirkit.toml"))
    first = resolve(f)
    assert (again.target, again.select, again.ignore, again.per_file_ignores,
            again.intrinsics, again.cache_folder(), again.inline_threshold) == \
        (first.target, first.select, first.ignore, first.per_file_ignores,
         first.intrinsics, first.cache_folder(), first.inline_threshold)


def test_fmt_takes_the_inline_threshold_from_the_configuration(tmp_path, capsys):
    kernel = '''from tvm.script import tir as T


@T.prim_func
def k():
    v = T.allocate_const([1, 2, 3, 4, 5, 6], "int16", [6])
    T.evaluate(0)
'''
    f = write(tmp_path / "k.py", kernel)
    write(tmp_path / "tirkit.toml", "[constants]\ninline-threshold = 4\n")
    assert cli(["fmt", str(f)]) == 0
    capsys.readouterr()
    assert (tmp_path / "k.params").exists()             # 6 elements > 4: to the file
    g = write(tmp_path / "b" / "k.py", kernel)
    write(tmp_path / "b" / "tirkit.toml", "[constants]\ninline-threshold = 4\n")
    assert cli(["fmt", "--inline-threshold", "64", str(g)]) == 0   # the option wins
    assert not (tmp_path / "b" / "k.params").exists()


def test_fmt_walks_folders_with_the_configuration_excludes(tmp_path, capsys):
    from conftest import EXAMPLES
    messy = (EXAMPLES / "valid" / "matmul.py").read_text().replace(
        "T.axis.remap(", "T.axis.remap (", 1)
    write(tmp_path / "tirkit.toml", 'extend-exclude = ["generated"]\n')
    write(tmp_path / "generated" / "k.py", messy)
    assert cli(["fmt", "--check", str(tmp_path)]) == 0
    write(tmp_path / "src" / "k.py", messy)
    assert cli(["fmt", "--check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert out.strip() == f"would reformat {tmp_path / 'src' / 'k.py'}"
