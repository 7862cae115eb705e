from kernels import MATMUL
from sched_util import body_text, check_result, check_scheduled, refused, sched


def test_annotate_and_unannotate():
    sch = sched(MATMUL)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    sch.annotate(b, "meta_schedule.tiling_structure", "SSRSRS")
    sch.annotate(i, "pragma_auto_unroll_max_step", 16)
    sch.annotate(j, "list", [1, 2])
    text = body_text(sch)
    assert 'T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})' in text
    assert 'for i in T.serial(16, annotations={"pragma_auto_unroll_max_step": 16}):' in text
    check_scheduled(sch)
    sch.unannotate(b, "meta_schedule.tiling_structure")
    sch.unannotate(i, "pragma_auto_unroll_max_step")
    assert "block_attr" not in body_text(sch)
    assert "pragma" not in body_text(sch)
    check_result(sch)


def test_unannotate_missing_key():
    sch = sched(MATMUL)
    b = sch.get_block("C")
    with refused("unannotate/missing-key", "C"):
        sch.unannotate(b, "nothing")


def test_annotate_bad_value():
    sch = sched(MATMUL)
    b = sch.get_block("C")
    with refused("annotate/bad-value"):
        sch.annotate(b, "k", object())
