"""The trace: every query and primitive applied to a Schedule, in order.

    sch.trace.as_python()      # runnable lines: `l1, l2 = sch.split(loop=l0, factors=[None, 32])`
    sch.trace.apply(Schedule(original))   # replay; returns the new schedule
"""
from __future__ import annotations

import json


class Instruction:
    __slots__ = ("name", "kwargs", "outputs", "varargs")

    def __init__(self, name, kwargs, outputs, varargs=None):
        self.name = name
        self.kwargs = kwargs          # every argument by name (the *args one as a tuple)
        self.outputs = outputs
        self.varargs = varargs        # the name of the *args parameter, if any

    def __repr__(self):
        return f"Instruction({self.name}, {self.kwargs!r}, {self.outputs!r})"


def _is_rv(x):
    from .state import BlockRV, LoopRV
    return isinstance(x, (BlockRV, LoopRV))


def _rvs(x):
    if _is_rv(x):
        return [x]
    if isinstance(x, (list, tuple)):
        return [r for y in x for r in _rvs(y)]
    return []


class Trace:
    def __init__(self, instructions=None):
        self.instructions = list(instructions or [])

    def record(self, name, kwargs, outputs, varargs=None):
        self.instructions.append(Instruction(name, dict(kwargs), outputs, varargs))

    def copy(self):
        return Trace(self.instructions)

    def __len__(self):
        return len(self.instructions)

    # ---- printing ---------------------------------------------------------------------------
    def as_python(self, sch_name="sch") -> str:
        from .state import BlockRV
        names: dict = {}
        counter = [0]
        lines = []

        def name_of(rv):
            n = names.get(id(rv))
            if n is None:
                n = ("b" if isinstance(rv, BlockRV) else "l") + str(counter[0])
                counter[0] += 1
                names[id(rv)] = n
            return n

        def val(x):
            if _is_rv(x):
                n = names.get(id(x))
                if n is None:
                    raise ValueError(f"{x!r} is not defined by the trace")
                return n
            if isinstance(x, (list, tuple)):
                return "[" + ", ".join(val(y) for y in x) + "]"
            if isinstance(x, dict):
                return "{" + ", ".join(f"{val(k)}: {val(v)}" for k, v in x.items()) + "}"
            if isinstance(x, str):
                return json.dumps(x)
            if isinstance(x, float):
                return repr(x)
            return repr(x)

        for ins in self.instructions:
            parts = [val(x) for x in ins.kwargs.get(ins.varargs, ())] if ins.varargs else []
            parts += [f"{k}={val(v)}" for k, v in ins.kwargs.items()
                      if k != ins.varargs and
                      not (ins.name == "get_block" and k == "func_name" and v is None)]
            args = ", ".join(parts)
            call = f"{sch_name}.{ins.name}({args})"
            outs = ins.outputs
            if outs is None or (isinstance(outs, (list, tuple)) and not outs):
                lines.append(call)
            elif _is_rv(outs):
                lines.append(f"{name_of(outs)} = {call}")
            else:
                targets = [name_of(o) for o in outs]
                lhs = ", ".join(targets) + ("," if len(targets) == 1 else "")
                lines.append(f"{lhs} = {call}")
        return "\n".join(lines) + ("\n" if lines else "")

    # ---- replay -------------------------------------------------------------------------------
    def apply(self, sch):
        """Apply every instruction to `sch` (a fresh Schedule of the original); returns it."""
        mapping: dict = {}

        def tr(x):
            if _is_rv(x):
                return mapping[id(x)]
            if isinstance(x, list):
                return [tr(y) for y in x]
            if isinstance(x, tuple):
                return tuple(tr(y) for y in x)
            return x

        for ins in self.instructions:
            fn = getattr(sch, ins.name)
            pos = tr(tuple(ins.kwargs.get(ins.varargs, ()))) if ins.varargs else ()
            out = fn(*pos, **{k: tr(v) for k, v in ins.kwargs.items() if k != ins.varargs})
            for a, b in zip(_rvs(ins.outputs), _rvs(out)):
                mapping[id(a)] = b
        return sch
