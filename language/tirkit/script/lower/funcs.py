"""Functions and modules: `@T.prim_func` definitions and `@I.ir_module` classes."""
from __future__ import annotations


from ...ir import dtype as D
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.constants import Constant, ConstantTable, numpy_dtype
from ...syntax import cst as C
from ...syntax.chunks import kernel_kind
from ...ir.dtype import ERROR_DTYPE
from .context import FAILED, BlockFrame, LowerError
from .scalars import reassigned
from .values import ParamRef, _Namespace, _Subscripted


class ConstantsBuilder:
    """Collects `T.allocate_const` data into the module's constant table."""

    def __init__(self, table: ConstantTable, base_dir=None):
        self.table = table
        self.base_dir = base_dir

    def add(self, name, data, dtype, extents, ctx, call) -> str:
        size = 1
        for x in extents:
            size *= x
        if isinstance(data, ParamRef):
            from ..params_ref import file_constant
            const = file_constant(name, data, dtype, tuple(extents), ctx, call, self.base_dir)
            return self.table.add(const)
        if not isinstance(data, (list, tuple)):
            ctx.fail("type/mismatch", "T.allocate_const takes a list of values or P[\"name\"]",
                     call)
        flat = _flatten(data)
        if len(flat) != size:
            ctx.fail("type/mismatch", f"T.allocate_const has {len(flat)} values but its extents "
                     f"{list(extents)} hold {size}", call)
        from ..const_values import values_array
        try:
            arr = values_array(flat, dtype, numpy_dtype(dtype)).reshape(extents)
        except (ValueError, OverflowError, TypeError) as e:
            ctx.fail("type/mismatch", f"constant values do not fit {dtype}: {e}", call)
        return self.table.add(Constant(name, dtype, tuple(extents), inline=arr))


def _flatten(data):
    out = []
    for x in data:
        if isinstance(x, (list, tuple)):
            out.extend(_flatten(x))
        else:
            out.append(x)
    return out


class FuncMixin:
    def lower_prim_func(self, f: C.FunctionDef, spelling: str) -> S.PrimFunc:
        private = False
        for d in f.decorators:
            d = C.unparen(d)
            if isinstance(d, C.Call):
                for k in d.keywords:
                    if k.arg == "private":
                        v = self.value(k.value)
                        private = bool(v)
        self.scopes = [{}]
        self.frames = [BlockFrame("root", self.span(f), 0, is_root=True)]
        self.loops = {}
        self.env_threads = {}
        self.sym_vars = []
        self.func_attrs = []
        self.func_attr_spans = {}
        self.stepped_names = {}
        self.buffer_map = []
        self.sparse_axes = []
        self.func_level = True
        self.decl_prefix = True      # only declarations so far in the function body
        params = []
        seen = {}
        for p in f.params:
            if p.kind:
                self.diag("syntax", f"'{p.kind}{p.name}' parameters are not supported in a kernel",
                          p)
                continue
            if p.name in seen:
                self.diag("well-formed/redefinition", f"parameter '{p.name}' is defined twice", p,
                          related=[(seen[p.name], "first definition")])
            seen[p.name] = self.span(p)
            try:
                params.append(self.param(p))
            except LowerError:
                # (said why) a failed buffer's uses add nothing more; any other parameter is
                # a variable of unknown type, which a `T.match_buffer` still declares a buffer
                # over and no type check questions again
                buffer = self._annotation_kind(p) in BUFFER_KINDS
                var = E.Var(p.name, "handle" if buffer else ERROR_DTYPE, None, self.span(p))
                params.append(var)
                self.define(p.name, FAILED if buffer else var, p, check=False)
        ret_type = None
        if f.returns is not None:
            try:
                ret_type = self._return_annotation(f.returns)
            except LowerError:
                pass
        self.rebound = reassigned(f.body)
        body = self.body(f.body)
        root = self.frames[0]
        if (root.has_blocks or root.alloc_buffers) and not _is_root(body, root):
            block = S.Block("root", (), None, None, body, None, tuple(root.alloc_buffers), (), ())
            body = S.BlockRealize((), E.IntImm("bool", 1), block)
        name_tok = f.aux
        return S.PrimFunc(f.name, tuple(params), tuple(self.buffer_map), body, ret_type,
                          tuple(self.func_attrs), private, self.span(f), spelling, (),
                          self.tok_span(name_tok) if name_tok is not None else None,
                          tuple(self.sparse_axes))

    def param(self, p):
        span = self.span(p)
        if p.annotation is None:
            self.fail("type/mismatch", f"parameter '{p.name}' needs a type annotation "
                      "(T.Buffer, T.handle or a dtype)", p)
        ann = C.unparen(p.annotation)
        tn = self._annotation_kind(p)
        if tn in BUFFER_KINDS:
            if isinstance(ann, C.Call):
                args, kwargs = self._args(ann), self._kwargs(ann)
            elif isinstance(ann, C.Subscript):
                items = [self.value(i) for i in ann.indices]
                args, kwargs = items, {}
            else:
                self.fail("type/mismatch", "T.Buffer needs a shape", ann)
            buf = self.make_buffer(p.name, args, kwargs, ann, p)
            handle = E.Var(f"{p.name}_handle", "handle", None, span)
            self.buffer_map.append((handle, buf))
            self.define(p.name, buf, p)
            return handle
        if isinstance(ann, C.Call) and tn in ("handle", "Ptr"):
            var = E.Var(p.name, "handle", self.pointer_type(ann), span)
            self.define(p.name, var, p)
            return var
        v = self.value(ann)
        if isinstance(v, str) and D.is_dtype(v):
            var = E.Var(p.name, v, None, span)
        elif isinstance(v, E.Var) and v.dtype == "unknown":
            var = E.Var(p.name, "handle", None, span)
        elif isinstance(v, E.Call) and v.op in ("handle", "Ptr"):
            var = E.Var(p.name, "handle", None, span)
        elif isinstance(v, _Subscripted):
            var = E.Var(p.name, "handle", None, span)
        else:
            if isinstance(v, _Namespace):
                var = E.Var(p.name, "handle", None, span)
            else:
                self.fail("type/mismatch", f"parameter '{p.name}' has an unknown type", ann)
        self.define(p.name, var, p)
        return var

    def _annotation_kind(self, p):
        """The `T.` name a parameter's annotation calls or is (`Buffer`, `handle`, ...)."""
        if p.annotation is None:
            return None
        ann = C.unparen(p.annotation)
        if isinstance(ann, C.Subscript):
            return self.t_name(ann.value)
        return self.t_name(ann.func) if isinstance(ann, C.Call) else self.t_name(ann)

    def pointer_type(self, ann):
        """`T.handle("float32", "shared")` / `T.handle(dtype=..., storage_scope=...)`."""
        args, kwargs = self._args(ann), self._kwargs(ann)
        dtype = args[0] if args else kwargs.get("dtype")
        scope = args[1] if len(args) > 1 else kwargs.get("storage_scope", "global")
        if dtype is None:
            return None
        if not (isinstance(dtype, str) and D.is_dtype(dtype)) or not isinstance(scope, str):
            self.fail("type/mismatch", "T.handle takes an element dtype and a storage scope", ann)
        return E.PointerType(dtype, scope)

    def _return_annotation(self, ann):
        """The dtype a function's `-> T.float32` names (None for one that is no dtype, as
        `-> T.handle` of a kernel returning nothing); a string there is an error, as TVM's
        parser wants a type and stops on it."""
        node = C.unparen(ann)
        if isinstance(node, C.Constant) and isinstance(node.value, str):
            spelled = f"T.{node.value}" if D.is_dtype(node.value) else "T.float32"
            self.fail("type/mismatch", f"a return annotation is a type (`-> {spelled}`); "
                      "TVM does not read a string there", ann)
        rt = self.value(ann)
        return rt if isinstance(rt, str) else None

    def lower_module(self, k: C.ClassDef, aliases, spelling, source_lines):
        functions = []
        self.module_class = k.name
        self.module_funcs = {item.name for item in k.body if isinstance(item, C.FunctionDef)}
        self.module_returns = {item.name: C.dotted_name(item.returns) for item in k.body
                               if isinstance(item, C.FunctionDef) and item.returns is not None}
        for item in k.body:
            functions.extend(self.lower_module_item(item, aliases, spelling, source_lines))
        return functions

    def lower_module_item(self, item, aliases, spelling, source_lines) -> list:
        """One statement of an @I.ir_module class: [(name, PrimFunc | ForeignFunc)];
        `self.module_class` and `self.module_funcs` say which module it belongs to,
        `self.module_returns` {name: the dotted name of its return annotation} what its
        functions return."""
        if isinstance(item, C.FunctionDef):
            kinds = [kernel_kind((C.dotted_name(C.unparen(d).func) if isinstance(
                C.unparen(d), C.Call) else C.dotted_name(d)) or "", aliases)
                for d in item.decorators]
            if "prim_func" in kinds:
                try:
                    return [(item.name, self.lower_prim_func(item, spelling))]
                except LowerError:
                    return []
            first = item.decorators[0].line if item.decorators else item.line
            text = "\n".join(source_lines[first - 1:item.end_line])
            return [(item.name, S.ForeignFunc(item.name, text, self.span(item)))]
        if isinstance(item, C.ExprStmt) and isinstance(C.unparen(item.value), C.Constant):
            return []
        text = "\n".join(source_lines[item.line - 1:item.end_line])
        return [("", S.ForeignFunc("", text, self.span(item)))]


BUFFER_KINDS = ("Buffer", "Tensor", "buffer")      # `T.buffer(...)` annotates a parameter too


def _is_root(body, root) -> bool:
    """TVM's rule: a function body that is one block without iterators (and nothing allocated
    at the function level) is the root block itself; anything else gets an implicit root."""
    return (not root.alloc_buffers and isinstance(body, S.BlockRealize)
            and not body.block.iter_vars and isinstance(body.predicate, E.IntImm)
            and bool(body.predicate.value))
