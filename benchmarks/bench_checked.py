"""What bounds-checked code (what `tirkit run` compiles; codegen/llvm/checks.py) costs against
the unchecked code `tirkit bench` times, on the same kernels in the same run.

    .venv/bin/python benchmarks/bench_checked.py     # writes benchmarks/results/checked.md

Kernels: the CPU kernels of the generated benchmark file (element-wise, reductions, scheduled
matmuls, padded convolutions; benchmarks/kernels.py) and of the shipped valid examples. Each
is compiled both ways without the cache; run time is the median of `Kernel.time` (wall clock,
10 measurements of at least ~5 ms each, on one thread); the two outputs are compared first.
"""
from __future__ import annotations

import pathlib
import statistics
import sys

import numpy as np

import host
import kernels
import tirkit
from tirkit.codegen import build
from tirkit.codegen.cli import compare, kernel_inputs
from tirkit.diagnostics import TirkitError

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = HERE.parent.parent / "shared" / "examples" / "valid"


def sources():
    yield "generated", tirkit.parse(kernels.generate(60, seed=0)[0]).module
    for path in sorted(EXAMPLES.glob("*.py")):
        yield path.stem, tirkit.parse(path.read_text()).module


def main() -> int:
    rows = []
    for origin, module in sources():
        for name, func in module.prim_funcs():
            try:
                func, arrays, scalars = kernel_inputs(func, np.random.default_rng(0), {})
                plain = build(func, module, cache=False)
            except TirkitError:
                continue                                  # GPU-bound kernels
            checked = build(func, module, cache=False, checked=True)
            mine = [a.copy() for a in arrays]
            checked(*mine, scalars=scalars, threads=1)
            plain(*arrays, scalars=scalars, threads=1)
            assert all(compare(x, y, b.dtype)[0] for b, x, y in zip(plain.buffers, mine, arrays))
            t = [k.time(*arrays, scalars=scalars, threads=1, repeat=10, min_seconds=0.05)
                 for k in (plain, checked)]
            c = [plain.compile_seconds, checked.compile_seconds]
            rows.append((f"{origin}/{name}", t, c))
            print(f"{origin}/{name}: {t[0] * 1e6:.1f} us unchecked, {t[1] * 1e6:.1f} us checked "
                  f"({t[1] / t[0]:.2f}x)", flush=True)
    ratios = [t[1] / t[0] for _, t, _ in rows]
    compiles = [c[1] / c[0] for _, _, c in rows]
    lines = host.header({"tirkit": "the same kernels compiled without bounds checks (the "
                         "anchor) and with them"}, "python benchmarks/bench_checked.py")
    lines += ["", "## Bounds-checked code against unchecked code", "",
              f"{len(rows)} kernels. Run time checked / unchecked: median "
              f"**{statistics.median(ratios):.2f}x**, quartiles "
              f"{np.percentile(ratios, 25):.2f}x / {np.percentile(ratios, 75):.2f}x, largest "
              f"{max(ratios):.2f}x. Compile time checked / unchecked: median "
              f"{statistics.median(compiles):.2f}x.", "",
              "| kernel | unchecked | checked | checked / unchecked |",
              "| --- | ---: | ---: | ---: |"]
    for label, t, _ in sorted(rows, key=lambda r: r[1][1] / r[1][0], reverse=True):
        lines.append(f"| {label} | {t[0] * 1e6:.1f} us | {t[1] * 1e6:.1f} us | "
                     f"{t[1] / t[0]:.2f}x |")
    out = HERE / "results" / "checked.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
