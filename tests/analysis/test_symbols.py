"""The position index: definitions, uses and scopes of buffers, variables and blocks."""
from __future__ import annotations

import tirkit
from tirkit.analysis.symbols import SymbolIndex, scan_tokens
from conftest import EXAMPLES


def index(name):
    text = (EXAMPLES / name).read_text()
    return SymbolIndex(tirkit.parse(text)), text.split("\n")


def pos(lines, line, word, nth=0):
    """1-based (line, column) of the nth whole occurrence of word on a 1-based line."""
    import re
    m = [x for x in re.finditer(r"\b" + word + r"\b", lines[line - 1])][nth]
    return line, m.start() + 1


def test_matmul_uses_and_definitions():
    ix, lines = index("valid/matmul.py")
    vk = ix.at(*pos(lines, 18, "vk"))
    assert vk.kind == "var" and vk.role == "iter"
    assert (vk.def_span.line, vk.def_span.column) == pos(lines, 13, "vk")
    assert [(u.line, u.column) for u in vk.uses] == [
        pos(lines, 13, "vk"), pos(lines, 14, "vk"), pos(lines, 14, "vk", 1),
        pos(lines, 18, "vk"), pos(lines, 18, "vk", 1)]
    c = ix.at(*pos(lines, 18, "C"))
    assert c.kind == "buffer" and c.role == "param" and c.def_span.line == 8
    assert len(c.uses) == 5
    block = ix.at(12, lines[11].index('"C"') + 2)
    assert block.kind == "block" and block.name == "C"


def test_shadowed_loop_names_resolve_to_their_own_loop():
    ix, lines = index("valid/gpu_matmul_shared.py")
    first = ix.at(*pos(lines, 20, "v0"))           # v0 of block A_shared
    second = ix.at(*pos(lines, 27, "v0"))          # v0 of block B_shared
    assert first is not second
    assert first.owner.name_hint == "A_shared" and second.owner.name_hint == "B_shared"
    ax0_a = ix.at(*pos(lines, 18, "ax0"))
    assert all(u.line < 25 for u in ax0_a.uses)


def test_attributes_keywords_strings_and_comments_are_not_uses():
    toks = scan_tokens(['x = T.grid(a, thread="k")  # k vi', 'y = "vi" + vi'], 1, 2)
    names = [(t.name, t.attribute, t.keyword_arg) for t in toks]
    assert ("grid", True, False) in names and ("thread", False, True) in names
    assert [t.name for t in toks if not t.attribute and not t.keyword_arg] == \
        ["x", "T", "a", "y", "vi"]


def test_rename_conflicts():
    ix, lines = index("valid/matmul.py")
    vi = ix.at(*pos(lines, 13, "vi"))
    assert ix.rename_conflict(vi, "row") is None
    assert ix.rename_conflict(vi, "vj") is not None
    assert ix.rename_conflict(vi, "T") is not None
    assert ix.rename_conflict(vi, "lambda") is not None


def test_symbolic_sizes_and_constants():
    ix, lines = index("valid/batch_matmul_symbolic.py")
    n = ix.at(*pos(lines, 7, "n"))
    assert n.role == "size" and len(n.uses) == 5
    ix, lines = index("valid/const_bias.py")
    bd = ix.at(*pos(lines, 7, "bias_data"))
    assert bd.role == "const" and len(bd.uses) == 2


def test_moved_definitions_index_like_a_fresh_file():
    from tirkit.analysis.symbols import tokens_of
    text = (EXAMPLES / "valid/gpu_matmul_shared.py").read_text()
    moved = "# one\n# two\n# three\n" + text
    before = SymbolIndex(tirkit.parse(text))
    after = SymbolIndex(tirkit.parse(moved))        # tokens from the cache, lines moved
    tirkit.clear_caches()
    fresh = SymbolIndex(tirkit.parse(moved))

    def view(ix, shift=0):
        return sorted((s.kind, s.name, s.def_span.line - shift, s.def_span.column,
                       tuple((u.line - shift, u.column, u.end_column) for u in s.uses))
                      for s in ix.symbols)

    def toks(ix, shift=0):
        return [(t.name, t.span.line - shift, t.span.column, t.span.end_column, t.attribute,
                 t.base, t.keyword_arg, sym.name if sym else None) for t, sym in ix.tokens]
    assert view(after) == view(fresh) and toks(after) == toks(fresh)
    assert view(after, 3) == view(before) and toks(after, 3) == toks(before)
    assert len(view(before)) > 10
    lines = moved.split("\n")
    f = fresh.function_at(10)
    assert [vars(t) for t in tokens_of(lines, f.span.line, f.span.end_line)] == \
        [vars(t) for t in scan_tokens(lines, f.span.line, f.span.end_line)]
