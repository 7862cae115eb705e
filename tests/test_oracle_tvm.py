"""TVM 0.27 as the oracle: our tirx-spelled print of each valid example parses in TVM to a
program structurally equal to TVM's parse of the original (skipped without apache-tvm)."""
import re

import pytest

import tirkit
from conftest import EXAMPLES
from test_core_examples import VALID, to_tirx

pytestmark = pytest.mark.oracle

IMPORTS = re.compile(r"^(from tvm\.script import .*|import tvm)\n", re.M)


@pytest.fixture(scope="module")
def tvm_parse():
    pytest.importorskip("tvm")
    import tvm.script
    import tvm_ffi
    from tvm.script.parser import ir as ir_parser
    from tvm.script.parser import tirx as tirx_parser
    from tvm.script.parser.core.entry import _default_globals

    def parse(text):
        extra = _default_globals()
        extra.update({"T": tirx_parser, "I": ir_parser})
        return tvm.script.from_source(IMPORTS.sub("", text), extra_vars=extra)

    def mismatch(a, b):
        return tvm_ffi.get_first_structural_mismatch(a, b, False)

    return parse, mismatch


def _original(tvm_parse, text):
    parse, _ = tvm_parse
    try:
        return parse(to_tirx(text))
    except Exception as e:  # noqa: BLE001 - a construct current TVM no longer has
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip().startswith("error:")]
        pytest.skip(f"TVM 0.27 does not parse this example ({(lines or [type(e).__name__])[0]})")


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
@pytest.mark.parametrize("source_spelling", ["classic", "tirx"])
def test_tvm_reads_our_tirx_print_as_the_same_program(tvm_parse, path, source_spelling):
    parse, mismatch = tvm_parse
    text = path.read_text()
    expected = _original(tvm_parse, text)
    source = text if source_spelling == "classic" else to_tirx(text)
    ours = tirkit.to_script(tirkit.parse(source, str(path)).module, spelling="tirx")
    assert "s_tir=True" in ours and "T.block(" not in ours
    got = parse(ours)
    assert mismatch(expected, got) is None


def test_tvm_sees_a_changed_program_as_different(tvm_parse):
    # the oracle is not vacuous: a one-constant change is caught
    parse, mismatch = tvm_parse
    text = (EXAMPLES / "valid" / "matmul.py").read_text()
    ours = tirkit.to_script(tirkit.parse(text).module, spelling="tirx")
    changed = ours.replace("T.float32(0)", "T.float32(1)")
    assert changed != ours
    assert mismatch(parse(to_tirx(text)), parse(changed)) is not None


@pytest.mark.parametrize("name", ["statement_alloc_buffer_with_annotations",
                                  "grid_into_one_name_then_remap",
                                  "match_buffer_without_shape_takes_the_region",
                                  "tuple_index_ramp_store_and_lowercase_buffer",
                                  "lowercase_ramp_and_broadcast_and_a_top_allocation_with_annotations",
                                  "python_float_is_float32_and_promotes",
                                  "python_int_is_int32_beside_a_narrow_integer",
                                  "block_attr_calls_merge",
                                  "explicit_root_over_plain_statements",
                                  "int64_thread_extent_of_an_int32_thread",
                                  "match_buffer_on_another_buffers_data",
                                  "continue_and_break_calls",
                                  "meta_var_names_its_value",
                                  "python_bool_in_a_target_dict"])
def test_tvm_reads_our_print_of_a_construct_as_the_same_program(tvm_parse, name):
    from test_core_constructs import CASES
    parse, mismatch = tvm_parse
    text, _ = CASES[name]
    ours = tirkit.to_script(tirkit.parse(text).module, spelling="tirx")
    assert mismatch(parse(to_tirx(text)), parse(ours)) is None


def test_tvm_sees_the_annotations_of_a_statement_allocation(tvm_parse):
    from test_core_constructs import CASES
    parse, mismatch = tvm_parse
    text, _ = CASES["statement_alloc_buffer_with_annotations"]
    ours = tirkit.to_script(tirkit.parse(text).module, spelling="tirx")
    # the annotations reach TVM's AllocBuffer: another value is another program
    assert mismatch(parse(to_tirx(text)), parse(ours.replace(": 64}", ": 32}"))) is not None


@pytest.mark.parametrize("name", ["PLAIN", "FOLDED"])
def test_tvm_computes_python_values_and_folds_constants_as_we_do(tvm_parse, name):
    import test_core_python_values as values
    parse, mismatch = tvm_parse
    text = getattr(values, name)
    ours = tirkit.to_script(tirkit.parse(text).module, spelling="tirx")
    assert mismatch(parse(to_tirx(text)), parse(ours)) is None


def test_tvm_refuses_each_statement_we_report_as_an_error(tvm_parse):
    from test_core_python_values import REFUSED
    parse, _ = tvm_parse
    lines = REFUSED.splitlines()
    wrong = sorted({d.span.line for d in tirkit.parse(REFUSED).diagnostics})
    assert wrong == list(range(10, 22))

    def keeping(line):
        return "\n".join(t for i, t in enumerate(lines, 1) if i not in wrong or i == line)

    parse(to_tirx(keeping(None)))       # the kernel without them is TVM's too
    for line in wrong:
        with pytest.raises(Exception):  # noqa: B017 - TVM raises its own error types
            parse(to_tirx(keeping(line)))


def test_tvm_refuses_each_wrong_use_of_vector_lanes_we_report(tvm_parse):
    from test_core_constructs import VECTOR_LANES
    parse, _ = tvm_parse
    lines = VECTOR_LANES.splitlines()
    refused = range(10, 15)             # TVM 0.27 keeps line 15 and wraps 70000 to 4464 lanes

    def keeping(line):
        return "\n".join(t for i, t in enumerate(lines, 1) if i < 10 or i == line)

    parse(to_tirx(keeping(None)))       # the sound vector code is TVM's too
    for line in refused:
        with pytest.raises(Exception):  # noqa: B017 - TVM raises its own error types
            parse(to_tirx(keeping(line)))


def test_tvm_reads_a_top_level_constant_where_the_kernel_stands(tvm_parse, tmp_path, monkeypatch):
    # imported as a module, as a user runs the file: the decorator runs where the kernel
    # stands, so `f` has the N above it and a name assigned only below is undefined
    import importlib

    from test_core_python_values import ORDERED
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "tk_ordered.py").write_text(to_tirx(ORDERED))
    mod = importlib.import_module("tk_ordered")
    got = {"f": mod.f, "g": mod.build()}
    ours = dict(tirkit.parse(ORDERED).module.prim_funcs())
    assert {n: int(f.body.extent) for n, f in got.items()} == {"f": 8, "g": 6}
    assert {n: int(f.body.extent.value) for n, f in ours.items()} == {"f": 8, "g": 6}
    (tmp_path / "tk_later.py").write_text(to_tirx(ORDERED.replace("range(N)", "range(N + M)")))
    with pytest.raises(Exception, match="Undefined variable: M"):  # noqa: B017 - TVM's own type
        importlib.import_module("tk_later")


def test_tvm_refuses_each_annotation_we_report_as_given_two_values(tvm_parse):
    from test_core_constructs import TWO_VALUES
    parse, _ = tvm_parse
    lines = TWO_VALUES.splitlines()
    wrong = sorted({d.span.line for d in tirkit.parse(TWO_VALUES).diagnostics})
    assert wrong == [7, 10, 11]

    def keeping(line):
        return "\n".join(t for i, t in enumerate(lines, 1) if i not in wrong or i == line)

    ours = tirkit.to_script(tirkit.parse(keeping(None)).module)
    _, mismatch = tvm_parse
    assert mismatch(parse(keeping(None)), parse(ours)) is None
    for line in wrong:
        with pytest.raises(Exception):  # noqa: B017 - TVM raises its own error types
            parse(keeping(line))


def test_tvm_refuses_a_meta_var_outside_an_assignment(tvm_parse):
    from test_core_constructs import INLINE_META_VAR
    parse, _ = tvm_parse
    with pytest.raises(Exception):  # noqa: B017 - TVM raises its own error types
        parse(INLINE_META_VAR)
    parse(INLINE_META_VAR.replace("T.meta_var(1)", "1"))
