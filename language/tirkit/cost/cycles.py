"""A cycle estimate of one store, from what LLVM makes of its loops (`tirkit.cost.inner`):
the model predicts its correction, not the whole time (model.py), so that the trees spend
their splits on what the estimate misses rather than on multiplying extents.

    c = cycles(loops, accesses, store, b, ops, lines)  # {name: value} for the names in NAMES

`b` is the store's `Inner`; `ops` {"vector": the value's float operations (its integer ones
when it has none), each an instruction per `b.width` elements, "mul": its float
multiplications, "add": its float additions, subtractions, min and max, "call": those of
them that call a math library function (exp, log, tanh, ...: scalar, whatever the width),
"divide": divisions}, per store execution; `lines` (lines missing L1, lines missing L2,
of those the scattered ones) from the locality model. Per store, in cycles of one core:

- throughput: per run of the body, the larger of its float instructions on the pipes and
  its loads over the two load pipes (a lane of a gather or a scatter: `GATHER_LANE` cycles;
  at least one cycle, the loop's own), plus its calls and divisions; and at least the cache
  lines it brings in, `L2_LINE` cycles for each line missing L1 and `MEMORY_LINE` for each
  missing L2 (`SCATTERED_LINE` for one the prefetcher cannot stream: a run of at most one
  line, a page or more from the next, waits for memory). An access walking a loop with a
  stride that maps more lines onto one L1 set than it has ways misses every time
  (`CONFLICT`). The core has four float pipes of
  `PIPE_BYTES` each, two that multiply (and run fused multiply-adds) and two that add (and
  take min and max); an instruction wider than a pipe (AVX-512's 64 bytes) takes two
  slots. The multiplies take the multiply pipes and the adds the add pipes, all of them
  at least their share of the four: a multiply-add of one lane or of 256 bits, which LLVM
  fuses into one instruction, half a cycle; of 512 bits, one cycle. An add fused with a
  multiply is counted on the add pipes too, so where adds outnumber multiplies this is
  an upper bound. Without float operations, two instructions a cycle;
- latency: a reduction in registers waits `ADD_LATENCY` per update of one accumulator in a
  run of the body (the body's elements over its accumulators: a reduction loop unrolled
  into the body chains its updates), less the runs of independent accumulators the
  out-of-order window (`WINDOW` instructions) overlaps; one in memory waits
  `FORWARD_LATENCY` (store to load forwarding and the add) per iteration of the loop that
  carries it, and at least `ADD_LATENCY` per update of each element, as many elements side
  by side as the loops inside the outermost reduction loop step through (`_chains`);
- the larger of the two, plus `SHARED_WRITE` per store execution when the parallel loop does
  not move the stored element (every thread writes the same lines), and per store
  instruction to a line that two threads' chunks of the parallel loop split between them
  (false sharing: a chunk whose stored bytes are not a whole number of lines);
- divided among the threads the parallel loop's chunks give (its chunking: `min(threads,
  extent)` equal chunks, the longest chunk counts). Entering parallel regions costs `LAUNCH`
  per launch, on the kernel's launch row (features.py), once for all the stores inside.

A kernel's estimate (`seconds`) is the sum over its stores plus `KERNEL_CALL`, what calling
it costs whatever it does: the measured times include it, and without it the smallest
kernels would be predicted hundreds of times too fast.

The constants are the machine class the shipped model is trained on (Zen 4, 2 threads,
the native thread pool); they need not be exact, only rank schedules the right way round,
and the model learns what they leave.
"""
from __future__ import annotations

import math

from .inner import Inner, runs
from .locality import LINE, lg, stride, varies
from .measure import THREADS       # threads a kernel runs on, as the dataset timed it

ADD_LATENCY = 4            # cycles of a dependent float add or fused multiply-add
FORWARD_LATENCY = 10       # cycles of a store forwarded to the next load, and the add
WINDOW = 256               # instructions the out-of-order core looks ahead
MAX_OVERLAP = 8            # independent accumulator chains it runs side by side, at most
CALL = 20                  # cycles of a math library call (expf, tanhf, ...)
DIVIDE = 5                 # cycles of a division, per vector instruction
GATHER_LANE = 1.7          # cycles per lane of a gather (vgatherqps with its index arithmetic)
PIPE_BYTES = 32            # bytes of one float pipe: a 64-byte instruction takes two slots
L2_LINE = 2                # cycles per 64-byte line brought from L2
MEMORY_LINE = 4            # cycles per line brought from L3 or memory
SCATTERED_LINE = 12        # cycles per such line the prefetcher cannot stream (locality.PAGE)
L1_SETS, L1_WAYS = 64, 8   # 32 KiB L1 data cache of 64-byte lines
CONFLICT = 3               # cycles per access that misses L1 by set conflict
SHARED_WRITE = 40          # cycles per store to a line another thread writes too
LAUNCH = 2500              # cycles per parallel launch (codegen/llvm/pool.py: about 0.75 us)
KERNEL_CALL = 3000         # cycles of one timed call of a kernel (an 8-element one: about 0.9 us)
CLOCK_HZ = 3.5e9           # the estimate in seconds, for the model's starting point

NAMES = ["cycles.throughput", "cycles.latency", "cycles.memory", "cycles.conflicts",
         "cycles.shared_writes", "cycles.split_lines", "cycles.core", "cycles.thread"]


def _conflicts(loops, accesses, total) -> float:
    """Accesses that miss L1 because the loop moving them fastest maps more lines onto
    one set than it has ways (`total`: the store's executions)."""
    out = 0.0
    for form, eb, _ in accesses:
        moving = [i for i in range(len(loops)) if varies(form, i)]
        if not moving:
            continue
        i = moving[-1]
        s = stride(form, i)
        if not s or s * eb < 64:
            continue
        step = (s * eb) // 64                      # lines per iteration
        sets = L1_SETS // math.gcd(step % L1_SETS or L1_SETS, L1_SETS)
        if loops[i][1] > sets * L1_WAYS:
            out += total
    return out


def _chunking(extent):
    """How the thread pool deals a parallel loop of `extent` iterations: (chunks, iterations
    of the longest chunk)."""
    threads = min(THREADS, extent)
    return threads, math.ceil(extent / threads)


def _split_lines(loops, store, eb, p) -> float:
    """The share of the stored elements that lie on a line two threads write, when the
    parallel loop at position `p` moves the store: its chunks (`_chunking`) meet inside a
    line unless a chunk's bytes are a whole number of lines, and each meeting shares one
    line of the bytes the loop spans."""
    s = stride(store, p)
    extent = loops[p][1]
    if not s or extent < 2:
        return 0.0
    threads, chunk = _chunking(extent)
    if chunk * s * eb % LINE == 0:
        return 0.0
    return min(1.0, (threads - 1) * LINE / (extent * s * eb))


def _chains(loops, store, b: Inner, total) -> float:
    """Cycles of the dependent adds of a reduction through memory: each element's updates
    form one chain, whatever loops carry it (the reloads forward the running value), and
    the chains that run side by side are those of the elements the loops inside the
    outermost reduction loop step through (a vector's lanes one chain), at most
    `MAX_OVERLAP`."""
    outer = next((i for i, (_, e) in enumerate(loops) if e > 1 and not varies(store, i)), None)
    if outer is None:
        return 0.0
    inside = math.prod(e for i, (_, e) in enumerate(loops) if i > outer and varies(store, i))
    side_by_side = min(MAX_OVERLAP, max(1.0, inside / b.width))
    return total / b.width * ADD_LATENCY / side_by_side


def cycles(loops, accesses, store, b: Inner, ops: dict, lines) -> dict:
    total = runs(loops)
    body_runs = total / b.elements
    vector = max(1.0, ops["vector"] * b.elements / b.width)
    eb = accesses[0][1] if accesses else 4
    # cycles of one operation's instructions in a run of the body, on a pair of pipes
    pair = b.elements / b.width * max(1.0, b.width * eb / PIPE_BYTES) / 2
    if ops["mul"] + ops["add"]:
        pipes = max(ops["mul"] * pair, ops["add"] * pair, ops["vector"] * pair / 2)
    else:
        pipes = vector / 2
    scalar = b.elements * (CALL * ops["call"] + DIVIDE * ops["divide"] / b.width)
    memory = L2_LINE * lines[0] + MEMORY_LINE * lines[1] \
        + (SCATTERED_LINE - MEMORY_LINE) * lines[2]
    conflicts = _conflicts(loops, accesses, total)
    memory += CONFLICT * conflicts
    access = (b.loads - b.gathers) / 2 + GATHER_LANE * b.gathers
    throughput = max(body_runs * (max(pipes, access, 1.0) + scalar), memory)
    latency = 0.0
    if b.register_reduction:
        chain = 1                       # updates of one accumulator in a row
        for i in range(b.kept, -1, -1):
            if varies(store, i):
                break
            chain *= loops[i][1]
        independent = any(varies(store, i) and loops[i][1] > 1 for i in range(b.kept))
        overlap = min(MAX_OVERLAP, max(1.0, WINDOW / (chain * (vector + b.loads + 2)))) \
            if independent else 1.0
        chained = max(1.0, b.elements / max(1, b.accumulators))   # updates of one, a run
        latency = body_runs * ADD_LATENCY * chained / overlap
    elif b.memory_reduction >= 0:
        latency = max(runs(loops[:b.memory_reduction + 1]) * FORWARD_LATENCY,
                      _chains(loops, store, b, total))
    core = max(throughput, latency)
    par = [i for i, (f, _) in enumerate(loops) if f.kind == "parallel"]
    shared = split = 0.0
    if par and loops[par[0]][1] > 1 and not varies(store, par[0]):
        shared = total
        core += SHARED_WRITE * total
    elif par:
        split = body_runs * _split_lines(loops, store, eb, par[0])
        core += SHARED_WRITE * split
    thread = core
    if par:
        extent = loops[par[0]][1]
        t, chunk = _chunking(extent)
        thread = core / t * (chunk / (extent / t))
    return {"cycles.throughput": lg(throughput), "cycles.latency": lg(latency),
            "cycles.memory": lg(memory), "cycles.conflicts": lg(conflicts),
            "cycles.shared_writes": lg(shared), "cycles.split_lines": lg(split),
            "cycles.core": lg(core),
            "cycles.thread": lg(thread)}


def seconds(rows, index) -> float:
    """A kernel's estimate in seconds from its feature rows: one call (`KERNEL_CALL`) plus
    the sum of its stores' `cycles.thread` (column `index`), at CLOCK_HZ."""
    body = float((2.0 ** rows[:, index] - 1.0).sum()) if len(rows) else 0.0
    return (KERNEL_CALL + body) / CLOCK_HZ


__all__ = ["cycles", "seconds", "NAMES", "THREADS", "CLOCK_HZ"]
