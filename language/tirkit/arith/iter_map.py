"""Quasi-affine iterator maps: the split/fuse structure of block bindings.

`detect(bindings, loops, an)` reads each binding as `base + sum(scale * split)`, where a
split is `(source // lower) % extent` of a loop variable or of a fused group of loops
(`(i * 4 + j) // 8`).  It then decides whether the bindings are independent: no two splits
may take the same digits of one source, and inside one binding each split's stride must
clear the span of the splits below it.  Every failure carries the binding index, a code
(`non-affine` or `not-bijective`) and an exact reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .affine import Aff, Atom, _expr_text


@dataclass
class Split:
    source: object          # a loop Var, or a Fused
    lower: int              # the source is divided by this first
    extent: object          # then taken modulo this (int, or Aff when symbolic)
    scale: int = 1          # coefficient in the binding


@dataclass(eq=False)
class Fused:
    """A fused group `sum(scale_k * split_k)` with contiguous strides, used as one source."""
    key: object
    parts: list
    extent: object
    text: str = ""

    @property
    def name(self):
        return self.text


@dataclass
class Failure:
    index: int              # which binding
    code: str               # "non-affine" | "not-bijective"
    reason: str
    other: int = None       # the other binding involved, if any


@dataclass
class IterMap:
    splits: list                          # per binding: [Split]
    bases: list                           # per binding: Aff of the non-iterator part
    failures: list = field(default_factory=list)
    overlap_ok: list = None

    @property
    def ok(self):
        return not self.failures


class _NotAffine(Exception):
    pass


def _name(src):
    return getattr(src, "name", "?")


def _ext_mul(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return None


def _ceil_div(e, d):
    if isinstance(e, int):
        return -(-e // d)
    return None


def detect(bindings, loops, an, names=None, overlap_ok=None, parallel=frozenset()) -> IterMap:
    """bindings: [PrimExpr or Aff]; loops: {Var: (min Aff, extent int|Aff)}.

    `overlap_ok[i]` true lets binding i combine splits whose ranges overlap (a sliding
    window, as `compute_at` produces for spatial iterators: legal, it recomputes values),
    except where the split that spans past the next stride is a loop of `parallel` (threads:
    two threads then write one element at the same time)."""
    names = names or [f"v{i}" for i in range(len(bindings))]
    result = IterMap([], [])
    result.overlap_ok = overlap_ok
    fused: dict = {}
    for idx, b in enumerate(bindings):
        aff = an.to_aff(b)
        try:
            splits, base = _read_binding(aff, loops, an, fused)
        except _NotAffine as e:
            result.failures.append(Failure(idx, "non-affine", str(e)))
            splits, base = [], aff
        result.splits.append(splits)
        result.bases.append(base)
        if splits:
            only = parallel if overlap_ok and overlap_ok[idx] else None
            msg = _check_strides(splits, names[idx], only, an)
            if msg:
                result.failures.append(Failure(idx, "not-bijective", msg))
    _check_overlap(result, names, fused)
    return result


# ---- reading a binding -----------------------------------------------------------------
def _read_binding(aff: Aff, loops, an, fused):
    splits = []
    base = Aff({}, aff.const)
    for k, v in aff.terms.items():
        if not isinstance(k, Atom):
            if k in loops:
                mn, ext = loops[k]
                if not (mn.is_const() and mn.const == 0):
                    base = base + mn.scale(v)       # i = mn + i', i' in [0, ext)
                if ext != 1:                        # a loop of one iteration is a constant
                    splits.append(Split(k, 1, ext, v))
            else:
                base = base + Aff.of(k, v)        # an outer iterator or a symbol
            continue
        if not any(x in loops for x in k.free_keys()):
            base = base + Aff.of(k, v)
            continue
        s = _read_atom(k, loops, an, fused)
        if s is None:
            continue
        s.scale *= v
        splits.append(s)
    return splits, base


def _read_atom(k: Atom, loops, an, fused):
    if k.kind in ("fdiv", "fmod"):
        mark = _read_mark(k.args[0], loops, an, fused)
        if mark is None:
            return None
        d = k.c
        s = mark.scale
        if k.kind == "fdiv":
            if d % s != 0:
                raise _NotAffine(f"in `{k!r}` the stride {s} does not divide {d}")
            dd = d // s
            # a symbolic extent keeps the outer extent (an over-estimate of the digits)
            ext = _ceil_div(mark.extent, dd) if isinstance(mark.extent, int) else mark.extent
            return Split(mark.source, mark.lower * dd, ext, 1)
        if d % s != 0:
            raise _NotAffine(f"in `{k!r}` the stride {s} does not divide {d}")
        dd = d // s
        if isinstance(mark.extent, int):
            if mark.extent <= dd:
                return Split(mark.source, mark.lower, mark.extent, s)
            if mark.extent % dd != 0 and not _predicate_divides(k.args[0], s, dd, an):
                raise _NotAffine(f"`{k!r}` wraps unevenly: `{_name(mark.source)}` takes "
                                 f"{mark.extent} values, not a multiple of {dd}")
        return Split(mark.source, mark.lower, dd, s)
    what = {"mul": "multiplies two loop-dependent terms",
            "min": "takes a minimum of loop-dependent terms",
            "max": "takes a maximum of loop-dependent terms"}.get(k.kind)
    if what is None:
        what = "is not an affine function of the loops"
    text = _expr_text(k.expr) if k.expr is not None else repr(k)
    raise _NotAffine(f"`{text}` {what}")


def _predicate_divides(arg: Aff, s, dd, an):
    """A predicate bounds the dividend to [0, P * s) with P a multiple of dd: the digits
    below it split evenly (`T.where(f * 128 + tx < 400)` under `(f * 128 + tx) % 20`)."""
    lo, hi = an.bound(arg)
    if lo is None or hi is None or not (lo.is_const() and hi.is_const()) or lo.const != 0:
        return False
    p, r = divmod(hi.const + 1, s)
    return r == 0 and p % dd == 0


def _read_mark(arg: Aff, loops, an, fused):
    """The source a division or modulo applies to: one split, or a fused group."""
    if arg.const != 0:
        raise _NotAffine(f"`{arg!r}` adds a constant inside a division or modulo")
    splits, base = _read_binding(arg, loops, an, fused)
    if not base.is_const():
        raise _NotAffine(f"`{arg!r}` mixes loop and non-loop terms inside a division or "
                         f"modulo")
    if not splits:
        return None
    if len(splits) == 1:
        return splits[0]
    splits = sorted(splits, key=lambda s: s.scale)
    s0 = splits[0].scale
    for a, b in zip(splits, splits[1:]):
        step = _ext_mul(a.scale, a.extent)
        if step is None or step != b.scale:
            raise _NotAffine(f"`{arg!r}` is not a fusion of loops: `{_name(b.source)}` steps "
                             f"by {b.scale} but the terms below it span "
                             f"{step if step is not None else 'a symbolic range'}")
    ext = 1
    for s in splits:
        ext = _ext_mul(ext, s.extent)
        if ext is None:
            break
    key = Aff({k: v // s0 for k, v in arg.terms.items()}).key()
    f = fused.get(key)
    if f is None:
        f = Fused(key, splits, ext if ext is not None else Aff({}, 0),
                  repr(Aff({k: v // s0 for k, v in arg.terms.items()})))
        fused[key] = f
    return Split(f, 1, f.extent, s0)


# ---- independence ----------------------------------------------------------------------
def _check_strides(splits, name, only=None, an=None):
    """Inside one binding: sorted by scale, each scale must reach past the span below it
    (with `only`, a set of loops, just where the split below is one of those loops).  A
    predicate that bounds the sum below (`T.where(ty * 32 + tx < 256)`) counts."""
    ss = sorted(splits, key=lambda s: s.scale)
    for n, (a, b) in enumerate(zip(ss, ss[1:])):
        if only is not None and (a.source not in only or b.scale == a.scale):
            continue
        span = _ext_mul(a.scale, a.extent)
        if span is not None and b.scale < span and an is not None and \
                _span_below(ss[:n + 1], an) <= b.scale:
            continue
        if span is not None and b.scale < span:
            return (f"`{name}` is not one-to-one: `{_name(a.source)}` spans {a.extent} values "
                    f"at stride {a.scale} but `{_name(b.source)}` steps by only {b.scale}, so "
                    f"two iterations give the same `{name}`")
    return None


def _span_below(splits, an):
    """How far the sum of plain-loop splits reaches under the analyzer's facts (max - min;
    infinite when not every split is a whole loop or the bound is not a constant)."""
    total = Aff({}, 0)
    for s in splits:
        if isinstance(s.source, Fused) or s.lower != 1:
            return float("inf")
        total = total + Aff.of(s.source, s.scale)
    lo, hi = an.bound(total)
    if lo is None or hi is None or not (lo.is_const() and hi.is_const()):
        return float("inf")
    return hi.const - lo.const + 1


def _intervals(src, lo, hi, out, depth=0):
    """The digits [lo, hi) of `src` (hi None: unbounded) as digit intervals of loops: a
    fused group's digits are mapped onto the digits of its parts.  Returns whether the
    mapping is exact (every boundary falls on a part boundary)."""
    if not isinstance(src, Fused) or depth > 8:
        out.append((src, lo, hi))
        return True
    exact = True
    for p in src.parts:
        s = p.scale
        top = s * p.extent if isinstance(p.extent, int) else None
        a = max(lo, s)
        b = hi if top is None else (top if hi is None else min(hi, top))
        if b is not None and a >= b:
            continue
        if a % s or (b is not None and b % s):
            exact = False
        plo = p.lower * (a // s)
        phi = None if b is None else p.lower * (-(-b // s))
        exact = _intervals(p.source, plo, phi, out, depth + 1) and exact
    return exact


def _overlap(a, b):
    _, alo, ahi = a
    _, blo, bhi = b
    if ahi is None and bhi is None:
        return True
    if ahi is None:
        return blo < alo < bhi or alo <= blo
    if bhi is None:
        return alo < blo < ahi or blo <= alo
    return alo < bhi and blo < ahi


class _Spaces:
    """Maps digit intervals of loops and fused groups into the digit space of the largest
    fused group that holds them, so splits of one fused loop nest compare exactly."""

    def __init__(self, fused):
        self.groups = sorted(fused.values(), key=lambda f: -len(_loops_of(f)))
        self.parts_of = {}        # source -> [(group, part)] in group-size order
        for g in self.groups:
            for p in g.parts:
                self.parts_of.setdefault(p.source, []).append((g, p))
        self.memo = {}

    def up(self, src, lo, hi, depth=0):
        """(top, lo', hi'): [lo, hi) of src as digits of the largest group containing it."""
        while depth < 12:
            depth += 1
            moved = self._via_part(src, lo, hi) or self._via_parts(src, lo, hi)
            if moved is None:
                return src, lo, hi
            src, lo, hi = moved
        return src, lo, hi

    def _via_part(self, src, lo, hi):
        for g, p in self.parts_of.get(src, ()):
            if not isinstance(p.extent, int):
                continue
            plo, phi = p.lower, p.lower * p.extent
            if lo < plo or hi > phi or (p.scale * lo) % plo or (p.scale * hi) % plo:
                continue
            return g, p.scale * lo // plo, p.scale * hi // plo
        return None

    def _via_parts(self, src, lo, hi):
        """A group that is a sub-range of a larger one: every part maps there with one
        ratio."""
        if not isinstance(src, Fused) or not src.parts or id(src) in self.memo:
            return None
        self.memo[id(src)] = True
        try:
            top, ratio = None, None
            for p in src.parts:
                if not isinstance(p.extent, int):
                    return None
                t, a, b = self.up(p.source, p.lower, p.lower * p.extent)
                if t is p.source or (top is not None and t is not top):
                    return None
                if a % p.scale or b % (p.scale * p.extent):
                    return None
                r = a // p.scale
                if b != r * p.scale * p.extent or (ratio is not None and r != ratio):
                    return None
                top, ratio = t, r
            return top, lo * ratio, hi * ratio
        finally:
            del self.memo[id(src)]


def _loops_of(f, depth=0):
    out = set()
    for p in f.parts:
        if isinstance(p.source, Fused) and depth < 8:
            out |= _loops_of(p.source, depth + 1)
        else:
            out.add(p.source)
    return out


def _uses(split, spaces):
    """[(interval, exact)] of a split: in its top digit space, and as loop digits."""
    if isinstance(split.extent, int):
        if split.extent <= 1:
            return None, []
        hi = split.lower * split.extent
    else:
        hi = None
    top = spaces.up(split.source, split.lower, hi) if hi is not None else \
        (split.source, split.lower, None)
    loops = []
    exact = _intervals(split.source, split.lower, hi, loops)
    return top, (loops if exact else None)


def _check_overlap(result, names, fused):
    spaces = _Spaces(fused)
    tops: dict = {}        # top source -> [(interval, binding index, split)]
    flat = []              # [(loop intervals | None, binding index, split)]
    for idx, splits in enumerate(result.splits):
        for s in splits:
            top, loops = _uses(s, spaces)
            if top is None:
                continue
            tops.setdefault(top[0], []).append((top, idx, s))
            flat.append((top[0], loops, idx, s))
    pairs = []
    for src, lst in tops.items():
        for j in range(1, len(lst)):
            for i in range(j):
                pairs.append((lst[i], lst[j], src))
    # splits living in different spaces: compare their loop digits when both are exact
    for j in range(1, len(flat)):
        for i in range(j):
            ti, li, ii, si = flat[i]
            tj, lj, ij, sj = flat[j]
            if ti is tj or li is None or lj is None:
                continue
            for x in li:
                for y in lj:
                    if x[0] is y[0]:
                        pairs.append(((x, ii, si), (y, ij, sj), x[0]))
    reported = set()
    for (a, ia, sa), (b, ib, sb), src in pairs:
        if ia == ib and sa is sb:
            continue
        if not _overlap(a, b):
            continue
        later, earlier = max(ia, ib), min(ia, ib)
        if (later, earlier) in reported:
            continue
        if later == earlier and result.overlap_ok and result.overlap_ok[later]:
            continue
        reported.add((later, earlier))
        if later == earlier:
            msg = f"`{names[later]}` uses loop `{_name(src)}` twice in overlapping digits"
        else:
            msg = (f"`{names[later]}` and `{names[earlier]}` both vary with loop "
                   f"`{_name(src)}`, so the block iterators are not independent")
        result.failures.append(Failure(later, "not-bijective", msg,
                                       earlier if later != earlier else None))
