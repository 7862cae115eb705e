"""The pre-commit hooks of `.pre-commit-hooks.yaml`, run by a real `pre-commit run
--all-files` in a temporary git repository: `tirkit-check` fails on an invalid kernel and
passes on a valid one; `tirkit-fmt` rewrites a kernel and then passes.  The hooks are
installed as `repo: local` hooks with `language: system` and this environment's tirkit, so
pre-commit downloads nothing."""
import shutil
import subprocess
import sys

import pytest
import yaml

from conftest import EXAMPLES, ROOT, server_env

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def local_config() -> str:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["tirkit-check", "tirkit-fmt"]
    local = []
    for h in hooks:
        assert h["entry"].split()[0] == "tirkit"
        cmd = [sys.executable, "-m", "tirkit.cli", *h["entry"].split()[1:]]
        local.append(dict(h, language="system", entry=" ".join(cmd)))
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]})


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def pre_commit(repo, hook):
    env = server_env()
    env["PRE_COMMIT_HOME"] = str(repo.parent / "pre-commit-home")
    env.pop("PRE_COMMIT", None)
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", hook, "--all-files",
                           "--color", "never"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q")
    (r / ".pre-commit-config.yaml").write_text(local_config())
    (r / "matmul.py").write_text((EXAMPLES / "valid" / "matmul.py").read_text())
    git(r, "add", "-A")
    return r


def test_check_hook_passes_on_valid_and_fails_on_invalid(repo):
    ok = pre_commit(repo, "tirkit-check")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "tirkit check" in ok.stdout and "Passed" in ok.stdout
    (repo / "bad.py").write_text((EXAMPLES / "invalid" / "out_of_bounds.py").read_text())
    git(repo, "add", "bad.py")
    bad = pre_commit(repo, "tirkit-check")
    assert bad.returncode == 1 and "Failed" in bad.stdout
    assert "bad.py:9:21: error:" in bad.stdout and "[bounds/out-of-bounds]" in bad.stdout


def test_fmt_hook_rewrites_then_passes(repo):
    src = repo / "matmul.py"
    text = src.read_text()
    messy = text.replace("T.axis.remap(", "T.axis.remap (", 1)
    assert messy != text
    src.write_text(messy)
    git(repo, "add", "-A")
    first = pre_commit(repo, "tirkit-fmt")
    assert first.returncode == 1 and "files were modified by this hook" in first.stdout
    assert src.read_text() == text
    git(repo, "add", "-A")
    second = pre_commit(repo, "tirkit-fmt")
    assert second.returncode == 0, second.stdout + second.stderr
