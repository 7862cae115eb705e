"""Races in the measured cost dataset: which of its scheduled kernels the race rules report.

    python benchmarks/dataset_races.py [--data benchmarks/data/cost_dataset.jsonl.gz]
        [--out benchmarks/results/dataset_races.md]

Each record's `script` (the kernel as the collection scheduled and measured it) is parsed and
read by the three rules that find iterations or instances touching one element, one writing:
`loop-nest/parallel-race`, `loop-nest/vector-dependence` and the instance reading of
`signature/iter-type` (verify/instance_dependence.py).  The report counts the kernels each
rule reports, per workload, with one witness of each workload; the collection checked its
kernels with the rules of its day, before these existed.  Nothing is written to the dataset.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))
sys.path.insert(0, HERE)

import host  # noqa: E402  (benchmarks/host.py: where this ran)

import tirkit  # noqa: E402
from tirkit.cost import dataset  # noqa: E402
from tirkit.verify import RuleContext  # noqa: E402
from tirkit.verify.instance_dependence import check_instance_dependence  # noqa: E402
from tirkit.verify.parallel_race import check_parallel_race  # noqa: E402
from tirkit.verify.vector_dependence import check_vector_dependence  # noqa: E402

RULES = {"loop-nest/parallel-race": check_parallel_race,
         "loop-nest/vector-dependence": check_vector_dependence,
         "signature/iter-type (instances)": check_instance_dependence}


def reports(record) -> list:
    """[(rule, diagnostic)] for one record's kernel."""
    result = tirkit.parse(record["script"], "kernel.py")
    ctx = RuleContext(module=result.module, text=result.text)
    return [(name, d) for _, f in result.module.prim_funcs()
            for name, rule in RULES.items() for d in rule(f, ctx)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(HERE, "data", "cost_dataset.jsonl.gz"))
    ap.add_argument("--out", default=os.path.join(HERE, "results", "dataset_races.md"))
    args = ap.parse_args(argv)
    start = time.perf_counter()
    records = dataset.read(args.data)
    per_workload = collections.Counter(r["workload"] for r in records)
    flagged = collections.defaultdict(set)          # (workload, rule) -> indices
    witness = {}
    for r in records:
        for name, d in reports(r):
            flagged[(r["workload"], name)].add(r["index"])
            witness.setdefault((r["workload"], name), (r["index"], d.message))
    seconds = time.perf_counter() - start
    kernels = {(w, i) for (w, _), ids in flagged.items() for i in ids}
    lines = ["# Races in the cost dataset", "",
             f"`python benchmarks/dataset_races.py` over `{os.path.relpath(args.data, ROOT)}`: "
             f"{len(records)} measured kernels of {len(per_workload)} workloads read in "
             f"{seconds:.0f} s; {len(kernels)} reported by a race rule.", "",
             *host.header(), "",
             "| workload | kernels | rule | reported | share |",
             "| --- | --- | --- | --- | --- |"]
    for (w, name), ids in sorted(flagged.items()):
        lines.append(f"| {w} | {per_workload[w]} | `{name}` | {len(ids)} | "
                     f"{len(ids) / per_workload[w]:.0%} |")
    if not flagged:
        lines.append("| (none) | | | | |")
    lines += ["", "One witness per row (the kernel's `index` in its workload):", ""]
    for (w, name), (index, message) in sorted(witness.items()):
        lines.append(f"- {w} #{index}, `{name}`: {message}")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
