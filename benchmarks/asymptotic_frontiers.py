"""Frontier sizes of the asymptotic cost model against Pigeon's artifact.

    .venv/bin/python benchmarks/asymptotic_frontiers.py   # writes results/asymptotic.md

For each kernel: the number of programs of minimum depth (the universe), the number left on
the frontier, the artifact's figures (Pigeon.jl results/*_data.json: universe_length,
frontier_length; spgemm2, spgemmh and sspgemm are its SpGEMM with three factors, B·(C∘D)
and the sampled SpGEMM) and the time taken.  `--quick` leaves out the two largest universes
(several minutes each)."""
from __future__ import annotations

import pathlib
import sys
import time

from tirkit.analysis.asymptotic import Kernel, Tensor
from tirkit.analysis.asymptotic.frontier import frontier, universe
from tirkit.analysis.asymptotic.model import programs

U, C = "u", "c"
HERE = pathlib.Path(__file__).resolve().parent


def k(out, ins, dims):
    return Kernel(out, tuple(ins), tuple(dims.items()))


D3 = {"i": "I", "j": "J", "k": "K"}
D4 = {"i": "I", "j": "J", "k": "K", "l": "L"}
KERNELS = [
    ("SpMV a[i] += B[i,j]·c[j]", k(Tensor("a", ("i",), (U,), False),
                                   [Tensor("B", ("i", "j"), (U, C)),
                                    Tensor("c", ("j",), (U,), False)], {"i": "I", "j": "J"}),
     (8, 4), False),
    ("SpGEMM A[i,j] += B[i,k]·C[j,k]", k(Tensor("A", ("i", "j"), (U, C)),
                                         [Tensor("B", ("i", "k"), (U, C)),
                                          Tensor("C", ("j", "k"), (U, C))], D3), (96, 12), False),
    ("SpMV2 a[i] += B[i,j]·C[j,k]·d[k]", k(Tensor("a", ("i",), (U,), False),
                                           [Tensor("B", ("i", "j"), (U, C)),
                                            Tensor("C", ("j", "k"), (U, C)),
                                            Tensor("d", ("k",), (U,), False)], D3),
     (144, 28), False),
    ("SpGEMM2 A[i,j] += B[i,k]·C[k,l]·D[j,l]", k(Tensor("A", ("i", "j"), (U, C)),
                                                 [Tensor("B", ("i", "k"), (U, C)),
                                                  Tensor("C", ("k", "l"), (U, C)),
                                                  Tensor("D", ("j", "l"), (U, C))], D4),
     (20736, 292), False),
    ("SpGEMMH A[i,j] += B[i,k]·C[j,k]·D[j,k]", k(Tensor("A", ("i", "j"), (U, C)),
                                                [Tensor("B", ("i", "k"), (U, C)),
                                                 Tensor("C", ("j", "k"), (U, C)),
                                                 Tensor("D", ("j", "k"), (U, C))], D3),
     (102272, 204), False),
    ("SSpGEMM A[i,j] += B[i,j]·C[i,k]·D[j,k]", k(Tensor("A", ("i", "j"), (U, C)),
                                                [Tensor("B", ("i", "j"), (U, C)),
                                                 Tensor("C", ("i", "k"), (U, C)),
                                                 Tensor("D", ("j", "k"), (U, C))], D3),
     (119296, 20), False),
    ("SDDMM A[i,j] = B[i,j]·C[i,k]·D[j,k]", k(
        Tensor("A", ("i", "j"), (U, C)), [Tensor("B", ("i", "j"), (U, C)),
                                          Tensor("C", ("i", "k"), (U, U), False),
                                          Tensor("D", ("j", "k"), (U, U), False)], D3),
     None, False),
    ("SDDMM A[i,j] = B[i,j]·C[i,k]·D[j,k], plain nests", k(
        Tensor("A", ("i", "j"), (U, C)), [Tensor("B", ("i", "j"), (U, C)),
                                          Tensor("C", ("i", "k"), (U, U), False),
                                          Tensor("D", ("j", "k"), (U, U), False)], D3),
     None, True),
    ("MTTKRP A[i,j] += B[i,k,l]·C[k,j]·D[l,j], plain nests", k(
        Tensor("A", ("i", "j"), (U, U), False), [Tensor("B", ("i", "k", "l"), (U, C, C)),
                                                 Tensor("C", ("k", "j"), (U, U), False),
                                                 Tensor("D", ("l", "j"), (U, U), False)], D4),
     None, True),
]


def main():
    rows = ["# Asymptotic frontiers against Pigeon's artifact", "",
            "Produced by `python benchmarks/asymptotic_frontiers.py`.", "",
            "| kernel | programs | frontier | artifact programs | artifact frontier | s |",
            "| --- | --- | --- | --- | --- | --- |"]
    quick = "--quick" in sys.argv
    for name, kern, art, plain in KERNELS:
        if quick and art and art[0] > 100000:
            rows.append(f"| {name} | left out (--quick) | | {art[0]} | {art[1]} | |")
            continue
        t = time.perf_counter()
        progs = list(programs(kern)) if plain else list(universe(kern))
        f = frontier(kern, progs)
        s = time.perf_counter() - t
        a = art or ("—", "—")
        rows.append(f"| {name} | {len(progs)} | {len(f)} | {a[0]} | {a[1]} | {s:.1f} |")
        print(rows[-1], flush=True)
    text = "\n".join(rows) + "\n"
    (HERE / "results" / "asymptotic.md").write_text(text)


if __name__ == "__main__":
    main()
