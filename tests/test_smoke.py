"""The shipped examples check clean and print back as a fixpoint."""
from pathlib import Path

import pytest

import tirkit

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_checks_clean_and_round_trips(path):
    text = path.read_text()
    result = tirkit.parse(text, str(path))
    assert [d for d in result.diagnostics if d.severity == "error"] == []
    assert len(result.module.prim_funcs()) >= 1
    printed = tirkit.to_script(result.module)
    again = tirkit.parse(printed)
    assert again.diagnostics == []
    assert tirkit.structural_equal(result.module, again.module)
    assert tirkit.to_script(again.module) == printed
