"""Schedule actions at a position: what is offered, and that each applies cleanly."""
import pytest

import tirkit
from conftest import ROOT
from kernels import MATMUL_RELU
from sched_util import EXAMPLES_VALID
from tirkit.schedule.actions import Action, actions_at, apply_action

PARTIAL = ROOT / "tests" / "data" / "partial" / "undefined_beside_sound.py"


def _lines_with_nodes(text):
    for ln, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("for ") or "T.block(" in line:
            col = line.index("for ") + 5 if line.lstrip().startswith("for ") else \
                line.index("with") + 1
            yield ln, col


@pytest.mark.parametrize("name", ["matmul.py", "gpu_matmul_shared.py", "softmax.py"])
def test_every_offered_action_applies_and_checks_clean(name):
    text = (EXAMPLES_VALID / name).read_text()
    r = tirkit.parse(text)
    before = {(d.code, d.line) for d in tirkit.check(text) if d.severity == "error"}
    assert not before
    n = 0
    for ln, col in _lines_with_nodes(text):
        for act in actions_at(r, ln, col):
            new, python = apply_action(r, act)
            errs = [d for d in tirkit.check(new) if d.severity == "error"]
            assert not errs, (act.title, errs)
            assert python.strip().splitlines()[-1].startswith(
                tuple(f"{x}sch.{act.calls[-1][0]}(" for x in ("", "l", "b")) +
                ("l", "b"))
            n += 1
    assert n >= 10


def test_actions_at_matmul_relu_block_and_loop():
    r = tirkit.parse(MATMUL_RELU)
    block_titles = [a.title for a in actions_at(r, 9, 14)]       # with T.block("C")
    assert "Compute 'C' at loop 'i' of 'relu'" in block_titles
    assert "Compute 'C' at loop 'j' of 'relu'" in block_titles
    loop_titles = [a.title for a in actions_at(r, 16, 9)]        # relu's `for i, j`
    assert "Split loop 'i' into 4 x 4" in loop_titles
    assert not any(t.startswith("Bind") for t in loop_titles)
    assert actions_at(r, 1, 1) == []


def test_action_round_trips_through_json():
    text = "import numpy as np\n" + MATMUL_RELU + "\n\ndef helper(x):  # not a kernel\n" \
        "    return x\n"
    r = tirkit.parse(text)
    act = actions_at(r, 17, 9)[0]
    again = Action.from_json(act.to_json())
    assert apply_action(r, again)[0] == apply_action(r, act)[0]
    # the rest of the file is untouched
    new = apply_action(r, act)[0]
    assert new.split("\n")[:4] == text.split("\n")[:4]
    assert new.split("\n")[-4:] == text.split("\n")[-4:]


def test_no_actions_on_a_kernel_holding_errors():
    """A kernel with an undefined name is partial IR, which cannot be printed back: it is
    offered no action; the sound kernel below it still is."""
    r = tirkit.parse(PARTIAL.read_text())
    assert [d.code for d in r.diagnostics] == ["name/undefined"]
    assert r.has_errors(r.module["undefined"]) and not r.has_errors(r.module["sound"])
    assert actions_at(r, 6, 9) == [] and actions_at(r, 7, 14) == []
    titles = [a.title for a in actions_at(r, 14, 9)]
    assert "Split loop 'i' into 8 x 8" in titles
    assert all(a.func == "sound" for a in actions_at(r, 14, 9))
