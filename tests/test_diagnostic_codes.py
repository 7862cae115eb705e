"""docs/diagnostics.md (with the pages it links) names every diagnostic code the sources
report, and only codes they still report."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
FAMILIES = r"(?:name|type|bounds|signature|loop-nest|dataflow|thread|well-formed|constants|codegen|suppression)"
CODE = re.compile(rf"^(?:syntax|internal|{FAMILIES}/[a-z-]+)$")
LITERAL = re.compile(r"""["']([a-z-]+(?:/[a-z-]+)?)["']""")
REGISTER = re.compile(r"""@register\(\s*["']([a-z/-]+)["']\s*,\s*codes=""")


def source_codes():
    codes, rule_names = set(), set()
    for d in ("language/tirkit", "server/tirkit_lsp"):
        for p in (ROOT / d).rglob("*.py"):
            text = p.read_text(encoding="utf-8")
            rule_names |= set(REGISTER.findall(text))
            codes |= {c for c in LITERAL.findall(text) if CODE.match(c)}
    # a rule registered with `codes=` is named by a prefix it never reports itself
    return codes - rule_names


def documented_codes():
    text = "".join((ROOT / "docs" / f).read_text(encoding="utf-8")
                   for f in ("diagnostics.md", "validation.md", "constants.md"))
    return {c for c in re.findall(r"`([a-z/-]+)`", text) if CODE.match(c)}


def test_every_reported_code_is_documented():
    codes = source_codes()
    assert {"syntax", "name/undefined", "bounds/out-of-bounds", "constants/corrupt",
            "codegen/unsupported", "internal"} <= codes     # the scan finds the codes
    missing = codes - documented_codes()
    assert not missing, f"codes reported but not in docs/diagnostics.md: {sorted(missing)}"


def test_every_documented_code_is_reported():
    stale = documented_codes() - source_codes()
    assert not stale, f"codes documented that nothing reports: {sorted(stale)}"
