"""Which LLVM pipeline a kernel gets, and the pipelines measured against each other.

    choose(func)                # -> Pipeline(level, vectorize, unroll, unroll_count)
    FULL                        # O3 with loop and SLP vectorization and LLVM's loop unroller
    build(func, module, pipeline=FULL)          # another pipeline, on request
    loop_metadata(ir_text)      # each loop hint made a distinct loop ID, as LLVM wants

Compile time is LLVM's optimizer and machine-code generation far more than anything else, and
both grow with the code LLVM's general loop unroller makes: left to itself on an unscheduled
conv2d it fully unrolls the 3x3 window, peels the reduction's first iteration and unrolls
each of the nine `ci` loops 16 times (5x the instructions: about 145 ms of 155 in LLVM,
against 55 ms without it).  The unroller pays at run time where a loop is left rolled around
a small body (a scalar innermost loop: consecutive iterations overlap; a short loop around one
vector statement: `scheduled_matmul_cpu`'s `k_1`, 3x slower rolled, since unrolled the
accumulator stays in registers), and that is all it does for these kernels.  So the general
unroller is off, and the code generator gives an unroll count of 4 (`llvm.loop.unroll.count`,
which LLVM honours with the unroller off) to each innermost rolled loop that the loop
vectorizer leaves rolled: a reduction (a store to an element that does not depend on the
loop variable) or a loop around vector code (`left_rolled` below); the loops the
vectorizer widens it interleaves itself, and a count there only multiplied the code
(softmax: 9 ms more, no faster).  Measured side by side (whole compile in CPU time, one
thread, znver4 host without AVX-512), against O3 with the unroller:

| kernel | compile ms, O3 / chosen | run time, chosen / O3 |
|---|---|---|
| `conv2d_nhwc_relu` | 147 / 66 | 0.99 (unroller off, no count: 1.06) |
| `scheduled_matmul_cpu` | 52 / 44 | 0.91-1.04 (no count: 3.35) |
| `matmul` | 29 / 22 | 1.01 (no count: 1.28) |
| `softmax` | 53 / 45 | 0.99 |
| `matmul_1024_avx2` | 68 / 58 | 1.01 |

Where the schedule unrolled every innermost rolled loop's body itself (`matmul_1024`: each
`k` and `i_0` loop holds a `T.unroll` nest of vector statements), a count would only repeat a
large body: such functions get `NO_UNROLL` (no count).  O2 and O1 cost as much compile time
as O3 (within 5%, the target machine's code generation level likewise), and O1 ran
`matmul_1024` 1.8x slower.  `benchmarks/bench_codegen.py` compares the chosen pipeline with
`FULL` in every run.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.dtype import parse_dtype
from ...ir.visit import child_fields, contains

ROLLED = ("serial", "unrolled")     # loops left as loops (vectorized ones become vector code)


@dataclass(frozen=True)
class Pipeline:
    level: int = 3               # LLVM speed level of the default pipeline and of code generation
    vectorize: bool = True       # loop and SLP vectorizers
    unroll: bool = True          # LLVM's general loop unroller (forced hints apply regardless)
    unroll_count: int = 0        # unroll count hinted on every innermost rolled loop (0: none)

    def describe(self) -> str:
        extras = [name for name, on in (("vectorize", self.vectorize), ("unroll", self.unroll))
                  if on]
        if self.unroll_count:
            extras.append(f"innermost loops x{self.unroll_count}")
        return f"O{self.level}" + (f" ({', '.join(extras)})" if extras else "")


FULL = Pipeline()
NO_UNROLL = Pipeline(unroll=False)
HINTED = Pipeline(unroll=False, unroll_count=4)


def choose(func: S.PrimFunc) -> Pipeline:
    """The pipeline for a function as written: `NO_UNROLL` when every innermost rolled loop
    (serial, holding no other rolled loop) holds an explicitly unrolled loop, else `HINTED`
    (see the module docstring for the measurements behind it)."""
    rolled = _innermost_rolled(func.body)
    if rolled and all(unrolled for _, unrolled in rolled):
        return NO_UNROLL
    return HINTED


def _innermost_rolled(body) -> list:
    """Serial loops with no serial loop inside them, each with whether it holds an unrolled
    loop: one pass over the statements (loops sit in statements only, never in an
    expression), bottom-up, so each loop's contents are looked at once."""
    out = []

    def visit(x) -> tuple:
        """(whether x holds a serial loop, whether it holds an unrolled loop), x included."""
        serial = unrolled = False
        for f in child_fields(type(x)):
            y = getattr(x, f)
            for z in (y if isinstance(y, tuple) else (y,)):
                if isinstance(z, S.Stmt):
                    s, u = visit(z)
                    serial, unrolled = serial or s, unrolled or u
        if type(x) is S.For:
            if x.kind == "serial" and not serial:
                out.append((x, unrolled))
            serial = serial or x.kind == "serial"
            unrolled = unrolled or x.kind == "unrolled"
        return serial, unrolled
    visit(body)
    return out


def left_rolled(s: S.For) -> bool:
    """Whether LLVM's loop vectorizer leaves this loop rolled: it is innermost (no rolled loop
    inside) and its body is vector code already or carries a value from one iteration to
    the next through memory (a store to an element that does not depend on the loop
    variable: a reduction, which the vectorizer does not reorder without fast-math).  Other
    innermost loops the vectorizer widens and interleaves itself; a count on them only
    multiplies their code."""
    if contains(s.body, lambda y: y.kind in ROLLED, S.For):
        return False
    var = s.loop_var

    def carried_or_vector(x):
        if isinstance(x, S.For):                 # a vectorized loop: vector code
            return True
        if isinstance(x, S.BufferStore):
            if parse_dtype(x.buffer.dtype).lanes > 1 or \
                    any(parse_dtype(i.dtype).lanes > 1 for i in x.indices):
                return True
            return not any(contains(i, lambda v: v is var, E.Var) for i in x.indices)
        return False
    return contains(s.body, carried_or_vector)


def loop_metadata(text: str) -> str:
    """Give every `!llvm.loop` reference its own distinct, self-referencing loop ID (LLVM's
    form), wrapping the hint node it points at."""
    import re
    counter = [0]

    def repl(m):
        counter[0] += 1
        n = 900000 + counter[0]
        extra.append(f"!{n} = distinct !{{!{n}, !{m.group(1)}}}")
        return f"!llvm.loop !{n}"
    extra = []
    text = re.sub(r"!llvm\.loop !(\d+)", repl, text)
    return text + "\n" + "\n".join(extra) + "\n" if extra else text


__all__ = ["Pipeline", "FULL", "NO_UNROLL", "HINTED", "choose", "left_rolled", "loop_metadata"]
