"""`for` loops: range, T.serial/parallel/vectorized/unroll/thread_binding and T.grid."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...syntax import cst as C
from ...ir.dtype import ERROR_DTYPE
from .context import MISSING, LoopInfo
from .fold import cast_folded

LOOP_KINDS = {"serial": "serial", "parallel": "parallel", "vectorized": "vectorized",
              "unroll": "unrolled", "thread_binding": "thread_binding", "grid": "grid"}


class LoopMixin:
    def _s_For(self, s):
        it = C.unparen(s.iter)
        if not isinstance(it, C.Call):
            self.fail("syntax", "a kernel loop iterates over range(...) or a T. loop", s.iter)
        tn = self.t_name(it.func)
        if tn is None and isinstance(C.unparen(it.func), C.Name) and it.func.id == "range" \
                and self.lookup("range") is MISSING:
            kind = "serial"
        elif tn in LOOP_KINDS:
            kind = LOOP_KINDS[tn]
        else:
            self.fail("syntax", "a kernel loop iterates over range(...) or a T. loop", it.func)
        args = self._args(it)
        kwargs = self._kwargs(it)
        span = self.span(s)
        targets = C.unparen(s.target)
        names = targets.elts if isinstance(targets, C.TupleExpr) else [targets]
        for t in names:
            if not isinstance(C.unparen(t), C.Name):
                self.fail("syntax", "a loop variable must be a name", t)
        packed = None      # `for iters in T.grid(a, b)`: one name for the tuple of loop vars
        if kind == "grid" and len(names) == 1 and len(args) > 1 and \
                not isinstance(targets, C.TupleExpr):
            packed = C.unparen(names[0])
            names = [C.Name(f"{packed.id}_{i}").set_pos(packed.line, packed.col, packed.end_line,
                                                        packed.end_col) for i in range(len(args))]
        stepped = ()
        if kind == "grid":
            if len(names) != len(args):
                self.fail("type/mismatch", f"T.grid has {len(args)} extents but the loop "
                          f"defines {len(names)} variables", s.target)
            extents = [self._integer_bound(self._as_expr(a, it), it, args, i)
                       for i, a in enumerate(args)]
            ranges = [(E.IntImm(ext.dtype, 0), ext) for ext in extents]
            kinds = ["serial"] * len(args)
            thread = None
            annotations = ()
        else:
            if len(names) != 1:
                self.fail("type/mismatch", "this loop defines one variable", s.target)
            start = kwargs.pop("start", None)
            stop = kwargs.pop("stop", None)
            if args:
                start = args[0]
            if len(args) > 1:
                stop = args[1]
            if start is None:
                self.fail("type/mismatch", "a loop needs an extent", it)
            thread = kwargs.pop("thread", None)
            if kind == "thread_binding" and thread is None:
                if len(args) > 2 and isinstance(args[2], str):
                    thread = args[2]
                elif len(args) == 2 and isinstance(args[1], str):
                    thread, stop = args[1], None
                else:
                    self.fail("type/mismatch", "T.thread_binding needs thread=\"...\"", it)
            step = kwargs.pop("step", None)
            if kind != "thread_binding" and len(args) > 2:     # range(0, n, 2)
                if len(args) > 3 or step is not None:
                    self.fail("type/mismatch", "a loop takes a start, a stop and a step", it)
                step = args[2]
            step = self._loop_step(step, it)
            ann = kwargs.pop("annotations", None) or {}
            annotations = tuple((k, v) for k, v in ann.items()) if isinstance(ann, dict) else ()
            if stop is None:
                ext = self._integer_bound(self._as_expr(start, it), it, args, 0)
                mn = E.IntImm(ext.dtype, 0)
            else:
                mn = self._integer_bound(self._as_expr(start, it), it, args, 0)
                hi = self._integer_bound(self._as_expr(stop, it), it, args, 1)
                mn, hi = self.match_types(mn, hi, isinstance(start, int), isinstance(stop, int), it)
                if isinstance(mn, E.IntImm) and isinstance(hi, E.IntImm):
                    ext = E.IntImm(hi.dtype, hi.value - mn.value)
                elif isinstance(mn, E.IntImm) and mn.value == 0:
                    ext = hi
                else:
                    ext = E.Sub(hi, mn, hi.dtype)
            if step is not None:
                mn, ext, stepped = _canonical(mn, ext, step, hi if stop is not None else ext)
            ranges = [(mn, ext)]
            kinds = [kind]
        self.push()
        loop_vars = []
        for t, (mn, ext), k in zip(names, ranges, kinds):
            t = C.unparen(t)
            var = E.Var(t.id, ext.dtype if ext.dtype.startswith(("int", "uint")) else "int32",
                        None, self.span(t))
            if stepped:
                stepped = stepped + (_scaled(var, stepped),)
                self.stepped_names[id(stepped[-1])] = var
                self.define(t.id, stepped[-1], t, check=False)
            else:
                self.define(t.id, var, t, check=False)
            self.loops[id(var)] = LoopInfo(var, mn, ext, k, thread, self.block_depth(),
                                           self.span(t))
            loop_vars.append(var)
        if packed is not None:
            self.define(packed.id, tuple(loop_vars), packed, check=False)
        self.loop_depth = getattr(self, "loop_depth", 0) + 1
        try:
            body = self.body(s.body)
        finally:
            self.pop()
            self.loop_depth -= 1
        for var, (mn, ext), k in reversed(list(zip(loop_vars, ranges, kinds))):
            body = S.For(var, mn, ext, k, body, thread if k == "thread_binding" else None,
                         annotations if k != "serial" or kind != "grid" else (), span,
                         stepped=stepped if kind != "grid" else ())
        return body

    def _loop_step(self, step, node):
        """A loop's step as a Python int above 1, or None for a step of 1 (or none)."""
        if step is None:
            return None
        if isinstance(step, E.IntImm):
            step = step.value
        if isinstance(step, bool) or not isinstance(step, int):
            self.fail("type/mismatch", "a loop step must be a constant integer (TVM's "
                      "CanonicalizeLoop refuses a step it cannot prove positive)", node)
        if step < 1:
            self.fail("type/mismatch", f"a loop step of {step}: a TIR loop counts up (while "
                      "v < stop, v += step), so its step is a positive integer", node)
        return None if step == 1 else step

    def _integer_bound(self, value, call, args, i):
        """`value`, the loop bound given as `args[i]` of `call`, as an integer: TVM's parser
        converts any other bound to int32 (`range(2.5)` runs 2 times, `range(n * 0.5)` over
        a Cast), which is an error for a float (it drops the fraction) and a warning for a
        bool, as for a store into an integer buffer.  Reported on the argument itself when
        each argument is one value (no `*` unpacking)."""
        if value.dtype.startswith(("int", "uint")) or value.dtype == ERROR_DTYPE:
            return value
        node = call.args[i] if len(call.args) == len(args) and i < len(args) else call
        lossy = value.dtype != "bool"
        self.diag("type/mismatch", f"a {value.dtype} loop bound: TVM converts it to int32"
                  f"{' and drops its fraction' if lossy else ''} (write an integer)", node,
                  severity="error" if lossy else "warning")
        return cast_folded("int32", value)


def _canonical(mn, ext, step, stop):
    """A loop from `mn` over `ext` by `step`, as TVM's CanonicalizeLoop makes it: from 0 over
    ceildiv(ext, step), with the trivia that prints it back (its variable's expression, the
    last item, is added once the variable exists)."""
    dt = ext.dtype
    if isinstance(ext, E.IntImm):
        trips = E.IntImm(dt, max(0, -(-ext.value // step)))
    else:
        trips = E.FloorDiv(E.Add(ext, E.IntImm(dt, step - 1), dt), E.IntImm(dt, step), dt)
    return E.IntImm(dt, 0), trips, (mn, stop, E.IntImm(dt, step), trips)


def _scaled(var, stepped):
    """`var * step + start`: what the loop's name stands for in its body."""
    start, _, step, _ = stepped
    scaled = E.Mul(var, step, var.dtype, var.span)
    if E.is_const_int(start, 0):
        return scaled
    return E.Add(scaled, start, var.dtype, var.span)
