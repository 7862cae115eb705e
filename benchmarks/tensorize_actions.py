"""Code actions at a block that an intrinsic can serve, in a 1,000-line file of u8·s8→s32
GEMM kernels: the first listing (auto_tensorize applied, printed and checked to verify the
quick fix) and the median of the listings after it (the verified actions are cached by the
kernel's text), CPU time. Anchor, same run: Python's `ast.parse` of the file.

    python benchmarks/tensorize_actions.py      # writes benchmarks/results/tensorize_actions.md
"""
from __future__ import annotations

import ast
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import host  # noqa: E402
import tirkit  # noqa: E402
from tirkit.schedule.actions import actions_at  # noqa: E402

KERNEL = '''@T.prim_func
def k{n}(A: T.Buffer((128, 256), "uint8"), B: T.Buffer((256, 64), "int8"),
         C: T.Buffer((128, 64), "int32")):
    for i, j, k in T.grid(128, 64, 256):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])


'''


def cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def main():
    text = "from tvm.script import tir as T\n\n\n" + "".join(KERNEL.format(n=n)
                                                            for n in range(77))
    lines = text.count("\n")
    res = tirkit.parse(text, "many.py")
    mid = 38
    all_lines = text.split("\n")
    start = all_lines.index(f"def k{mid}(A: T.Buffer((128, 256), \"uint8\"), B: T.Buffer("
                            "(256, 64), \"int8\"),")
    line = start + 4                                    # `with T.block("C"):` of k38, 1-based
    assert 'T.block("C")' in all_lines[line - 1]
    first, acts = cpu(lambda: actions_at(res, line, 22))
    assert acts and acts[0].title.startswith("Tensorize block 'C'")
    warm = [cpu(lambda: actions_at(res, line, 22))[0] for _ in range(15)]
    anchor = statistics.median(cpu(lambda: ast.parse(text))[0] for _ in range(5))
    med = statistics.median(warm)
    out = host.header({"ast.parse": "one thread"}) + [
        "", f"# Code actions at a block with a tensorize candidate ({lines}-line file)", "",
        "| what | CPU ms | ast.parse of the file | ratio | target |",
        "| --- | ---: | ---: | ---: | --- |",
        f"| first listing (auto_tensorize applied, printed, checked) | {first * 1e3:.1f} | "
        f"{anchor * 1e3:.1f} | {first / anchor:.1f} | — |",
        f"| later listings at the same block (median of 15) | {med * 1e3:.1f} | "
        f"{anchor * 1e3:.1f} | {med / anchor:.2f} | ≤ 50 ms |",
        "", f"Actions listed: {len(acts)}, the first: {acts[0].title}."]
    p = Path(__file__).resolve().parent / "results" / "tensorize_actions.md"
    p.write_text("\n".join(out) + "\n")
    print("\n".join(out[-6:]))


if __name__ == "__main__":
    main()
