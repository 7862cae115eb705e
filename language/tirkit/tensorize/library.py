"""The intrinsic library: tensor instructions described as TVMScript files.

    lib = load()                          # the shipped intrinsics (tensorize/intrinsics/*.py)
    lib = load(["~/my_intrinsics"])       # plus every `*.py` in those folders (theirs first)
    lib.get("x86.avx2.dot_8x4_u8s8s32")   # -> Intrinsic
    lib.for_target("llvm")                # the intrinsics this machine's CPU has

An intrinsic file holds two `@T.prim_func`s, `desc` (what the instruction computes: a root
block holding one block over its operands) and `impl` (how: the instruction's call), with
the same parameters in the same order, and a header of `# key: value` comment lines:

    # name: x86.avx2.dot_8x4_u8s8s32          (unique; the file name when absent)
    # label: x86 AVX2 (u8·s8→s32, 8x4)         (how the editor names it)
    # targets: llvm +avx2                      (kind, then required CPU features; or cuda-sm80)
    # tvm: dot_16x4_vnni                       (TVM's name for the same intrinsic, if any)
    # ops-per-cycle: 64                        (integer ops per cycle, for speed estimates)
    # caveat: pair sums saturate to s16 ...    (where the instruction differs from `desc`;
                                                the hint and hover say it)

The impl may allocate buffers in its root block (the wmma fragments), which tensorize adds
to the tensorized block, and may declare its operands strided (`strides=("s", 1)`: it reads
`X.strides[0]` and `X.elem_offset`), which lets the mapping take them in place. Shipped:
x86 VNNI, AVX-VNNI, AVX-512 and AVX2 u8·s8, AVX-512 BF16, ARM sdot/udot, CUDA wmma.

A file that does not parse, or lacks `desc`/`impl`, is reported in `lib.errors` (path,
diagnostics) and left out; the others still load. Loaded folders are cached by their
files' paths and modification times.
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..ir import stmt as S
from ..lru import LRU

BUILTIN = Path(__file__).resolve().parent / "intrinsics"
ENV = "TIRKIT_INTRINSICS"
_HEADER = re.compile(r"^#\s*([a-z-]+)\s*:\s*(.*?)\s*$")
_CACHE = LRU(32)


@dataclass(frozen=True)
class Intrinsic:
    name: str
    label: str
    targets: tuple                     # each (kind, required features): ("llvm", ("+avx2",))
    desc: S.PrimFunc
    impl: S.PrimFunc
    path: str
    tvm_name: str = ""
    ops_per_cycle: int = 0
    caveat: str = ""

    @property
    def update(self) -> S.BlockRealize:
        """The desc's one computing block (the block under its root)."""
        return compute_block(self.desc)

    def available_on(self, target) -> bool:
        kind, features = describe_target(target)
        for tkind, need in self.targets:
            if tkind == "llvm" and kind == "llvm" and all(f in features for f in need):
                return True
            if tkind.startswith("cuda-sm") and kind.startswith("cuda-sm") and \
                    _sm(kind) >= _sm(tkind):
                return True
        return False


@dataclass
class Library:
    intrinsics: list = field(default_factory=list)
    errors: list = field(default_factory=list)       # (path, [Diagnostic]) or (path, message)

    def get(self, name):
        return next((i for i in self.intrinsics if i.name == name or i.tvm_name == name), None)

    def names(self):
        return [i.name for i in self.intrinsics]

    def for_target(self, target):
        return [i for i in self.intrinsics if i.available_on(target)]

    def by_impl(self, body):
        """The intrinsic whose impl body is `body` (structurally), or None."""
        from ..ir.equality import structural_equal
        for i in self.intrinsics:
            root = i.impl.body.block if isinstance(i.impl.body, S.BlockRealize) else None
            if root is not None and structural_equal(root.body, body):
                return i
        return None


def _sm(name):
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) if m else 0


def describe_target(target):
    """(kind, features) of a target: a name ("llvm": this CPU, "cuda-sm80"), an LLVM target
    string ("llvm -mattr=+avx512vnni,+avx512bw"), or a dict as `engine.host_target()`."""
    if target is None:
        target = "llvm"
    if isinstance(target, dict):
        return target.get("kind", "llvm"), frozenset(target.get("mattr", ()))
    text = str(target).strip()
    kind = text.split()[0] if text else "llvm"
    m = re.search(r"-mattr=(\S+)", text)
    if kind == "llvm":
        if m:
            return "llvm", frozenset(f for f in m.group(1).split(",") if f)
        return "llvm", host_features()
    from ..target import get
    t = get(kind)
    return (t.name if t is not None else kind), frozenset()


# /proc/cpuinfo flag -> LLVM feature name, for the features intrinsics ask for
_CPUINFO = {"avx2": "+avx2", "fma": "+fma", "avx512f": "+avx512f", "avx512bw": "+avx512bw",
            "avx512_vnni": "+avx512vnni", "avx_vnni": "+avxvnni", "avx512_bf16": "+avx512bf16",
            "asimddp": "+dotprod", "sse4_1": "+sse4.1"}


@functools.lru_cache(maxsize=1)
def host_features() -> frozenset:
    """This CPU's features in LLVM's spelling, from the kernel's CPU flags (the same list
    `codegen.llvm.engine.host_target()` gets from LLVM, for the features above; a test
    compares the two). Empty where /proc/cpuinfo does not exist."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    flags = set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            flags.update(line.split(":", 1)[1].split())
            break
    return frozenset(v for k, v in _CPUINFO.items() if k in flags)


def compute_block(func: S.PrimFunc) -> S.BlockRealize:
    """The one block realize under the root block of an intrinsic's desc."""
    found = []

    def go(x):
        if isinstance(x, S.BlockRealize):
            found.append(x)
            return
        if isinstance(x, S.SeqStmt):
            for y in x.seq:
                go(y)
        elif isinstance(x, (S.For, S.LetStmt)):
            go(x.body)
    root = func.body
    if isinstance(root, S.BlockRealize):
        go(root.block.body)
    else:
        go(root)
    return found[0] if len(found) == 1 else None


def _header(text):
    out = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        m = _HEADER.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _targets(spec):
    out = []
    for part in spec.split(";"):
        words = part.split()
        if words:
            out.append((words[0], tuple(words[1:])))
    return tuple(out)


def load_file(path):
    """(Intrinsic or None, errors) for one file."""
    from ..script.parse import parse
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        return None, [(path, str(e))]
    res = parse(text, path=path)
    errs = [d for d in res.diagnostics if d.severity == "error"]
    if errs:
        return None, [(path, errs)]
    funcs = dict(res.module.prim_funcs())
    if "desc" not in funcs or "impl" not in funcs:
        return None, [(path, "an intrinsic file defines `desc` and `impl`")]
    desc, impl = funcs["desc"], funcs["impl"]
    if compute_block(desc) is None:
        return None, [(path, "`desc` holds one block under its root block")]
    if len(desc.params) != len(impl.params):
        return None, [(path, "`desc` and `impl` take the same parameters")]
    h = _header(text)
    name = h.get("name") or Path(path).stem
    ops = h.get("ops-per-cycle", "0")
    return Intrinsic(name, h.get("label", name), _targets(h.get("targets", "")), desc, impl,
                     path, h.get("tvm", ""), int(ops) if ops.isdigit() else 0,
                     h.get("caveat", "")), []


def _folder_key(folder):
    try:
        files = sorted(Path(folder).expanduser().glob("*.py"))
        return tuple((str(p), p.stat().st_mtime_ns) for p in files)
    except OSError:
        return ()


def search_path(dirs=None):
    """The folders searched: `dirs`, then those in $TIRKIT_INTRINSICS, then the shipped one."""
    out = [str(Path(d).expanduser()) for d in (dirs or ()) if d]
    env = os.environ.get(ENV, "")
    out += [d for d in env.split(os.pathsep) if d]
    out.append(str(BUILTIN))
    return out


def load(dirs=None) -> Library:
    lib = Library()
    seen = set()
    for folder in search_path(dirs):
        key = _folder_key(folder)
        part = _CACHE.get(key)
        if part is None:
            part = Library()
            for path, _ in key:
                intr, errs = load_file(path)
                if intr is not None:
                    part.intrinsics.append(intr)
                part.errors.extend(errs)
            _CACHE.put(key, part)
        for i in part.intrinsics:
            if i.name not in seen:
                seen.add(i.name)
                lib.intrinsics.append(i)
        lib.errors.extend(part.errors)
    return lib


def desc_semantics(block: S.Block, dirs=None):
    """The body of a tensorized block (one whose body is an intrinsic's impl over its
    `T.match_buffer` views) rewritten to the intrinsic's desc over the same views, or None
    when the body is no known impl. The reference interpreter runs this."""
    if not block.match_buffers:
        return None
    intr = load(dirs).by_impl(block.body)
    if intr is None:
        return None
    from ..ir.visit import rebuild
    views = [m.buffer for m in block.match_buffers]
    d_bufs = [intr.desc.buffer_of(p) for p in intr.desc.params]
    i_bufs = [intr.impl.buffer_of(p) for p in intr.impl.params]
    by_shape = {}
    for v in views:
        by_shape.setdefault((v.dtype, tuple(str(s) for s in v.shape)), []).append(v)
    swap = {}
    for d, i in zip(d_bufs, i_bufs):
        cands = by_shape.get((i.dtype, tuple(str(s) for s in i.shape)), [])
        if not cands:
            return None
        swap[id(d)] = cands.pop(0)

    def fn(y, x):
        if isinstance(y, (S.BufferStore, S.BufferRegion)) or type(y).__name__ == "BufferLoad":
            if id(y.buffer) in swap:
                import dataclasses
                return dataclasses.replace(y, buffer=swap[id(y.buffer)])
        return None
    root = intr.desc.body.block.body if isinstance(intr.desc.body, S.BlockRealize) \
        else intr.desc.body
    return rebuild(root, fn)


def with_desc_semantics(body, dirs=None):
    """`body` with every tensorized block's body replaced by its intrinsic's desc (see
    `desc_semantics`); the same object when there is none."""
    from ..ir.visit import rebuild
    import dataclasses

    def fn(y, x):
        if isinstance(y, S.Block) and y.match_buffers:
            desc = desc_semantics(y, dirs)
            if desc is not None:
                return dataclasses.replace(y, body=desc)
        return None
    return rebuild(body, fn)
