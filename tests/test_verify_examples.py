"""The shared examples: every `# expect: CODE` is reported on its line, nothing else at
error severity, and the valid examples are clean in both spellings."""
import re

import pytest

import tirkit
from conftest import EXAMPLES

INVALID = sorted((EXAMPLES / "invalid").glob("*.py"))
VALID = sorted((EXAMPLES / "valid").glob("*.py"))


def tirx(text):
    text = text.replace("from tvm.script import tir as T", "from tvm.script import tirx as T")
    text = re.sub(r"\bT\.block\(", "T.sblock(", text)
    return re.sub(r"@T\.prim_func\s*\n", "@T.prim_func(s_tir=True)\n", text)


def expects(text):
    return {(i + 1, m.group(1)) for i, line in enumerate(text.splitlines())
            if (m := re.search(r"#\s*expect:\s*(\S+)", line))}


@pytest.mark.parametrize("spell", [str, tirx], ids=["classic", "tirx"])
@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_example_reports_exactly_its_expects(path, spell):
    text = spell(path.read_text())
    diags = tirkit.check(text, str(path))
    want = expects(text)
    got = {(d.span.line, d.code) for d in diags}
    assert want <= got
    errors = {(d.span.line, d.code) for d in diags if d.severity == "error"}
    assert errors <= want


@pytest.mark.parametrize("spell", [str, tirx], ids=["classic", "tirx"])
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_example_has_no_error(path, spell):
    diags = tirkit.check(spell(path.read_text()), str(path))
    assert [d for d in diags if d.severity == "error"] == []
    assert not [d for d in diags if d.code == "internal"]
