"""Tensorization suggestions: which intrinsics of a target can serve a block, how much faster,
for the diagnostic, hover and the command line (the schedule action
that applies one is `schedule.actions.tensorize_actions`).

    block_mappings(func, realize, target, dirs)   # -> (feasible Mappings best first, reasons)
    message(mapping)              # "block `C` can use x86 AVX2 (u8·s8→s32, 8x4): ..."
    hover_lines(func, realize, target, dirs)                # markdown bullet lines

The speed-up is an estimate: the instruction's integer operations per cycle (its file's
`ops-per-cycle`) over `SCALAR_OPS_PER_CYCLE`, what the LLVM-vectorized untensorized loop
reaches on a 256-bit CPU (8 lanes of 32-bit multiply and add per cycle), divided by the
padding's extra work. `benchmarks/tensorize_speed.py` measures the real ratio."""
from __future__ import annotations

from ..ir import stmt as S
from .library import load
from .mapping import mappings

SCALAR_OPS_PER_CYCLE = 16


def is_candidate(realize) -> bool:
    """A block (or its realize) worth asking about: an update with a reduction iterator."""
    b = realize.block if isinstance(realize, S.BlockRealize) else realize
    return isinstance(b.body, S.BufferStore) and b.init is not None and \
        any(iv.kind == "R" for iv in b.iter_vars)


def block_mappings(realize, target=None, dirs=None):
    if not is_candidate(realize):
        return [], []
    return mappings(realize, load(dirs), target if target is not None else "llvm")


def speedup(m) -> float:
    ops = m.intrin.ops_per_cycle or SCALAR_OPS_PER_CYCLE
    return ops / SCALAR_OPS_PER_CYCLE / (1 + m.waste)


def _axis(name):
    return name[1:].upper() if name.startswith("v") and len(name) > 1 else name


def message(m) -> str:
    pads = ", ".join(f"{_axis(n)} padded {a}→{b}" for n, a, b in m.padded)
    return (f"block `{m.block}` can use {m.intrin.label}"
            f"{': ' + pads if pads else ''}, estimated {speedup(m):.1f}x faster"
            f"{'; ' + m.intrin.caveat if m.intrin.caveat else ''}")


def hover_lines(realize, target=None, dirs=None) -> list:
    """Markdown bullets: each intrinsic of the library that serves the block on the target
    (with its mapping and estimate), then for each other one the first reason it does not."""
    from .mapping import find_mapping
    if not is_candidate(realize):
        return []
    target = target if target is not None else "llvm"
    lib = load(dirs)
    ok, bad, absent = [], [], []
    for i in lib.intrinsics:
        m = find_mapping(realize, i)
        if not i.available_on(target):
            need = " ".join(f for _, fs in i.targets for f in fs) or \
                ", ".join(k for k, _ in i.targets)
            absent.append(f"- not `{i.name}`: {target} lacks {need}"
                          + (f" (it would map {m.describe()})" if m.feasible else ""))
        elif m.feasible:
            ok.append(m)
        else:
            bad.append(f"- not `{i.name}`: {m.message} ({m.code})")
    ok.sort(key=lambda m: (m.waste, -m.intrin.ops_per_cycle))
    return [f"- **{m.intrin.label}** (`{m.intrin.name}`): {m.describe()}, estimated "
            f"{speedup(m):.1f}x faster" + (f"; {m.intrin.caveat}" if m.intrin.caveat else "")
            for m in ok] + bad + absent
