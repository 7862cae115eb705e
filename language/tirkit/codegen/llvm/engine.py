"""Target and execution: host CPU target machine (name and features from LLVM), optimization,
object code, and one MCJIT engine per compiled kernel (each engine owns its own target
machine: sharing one between engines crashed)."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import threading

import llvmlite.binding as llvm

_LOCK = threading.Lock()
_READY = False


def init():
    global _READY
    with _LOCK:
        if _READY:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()      # the pool's inline "pause" (pool.py)
        for lib in ("c", "m", "pthread"):
            path = ctypes.util.find_library(lib)
            if path:
                llvm.load_library_permanently(path)
        _READY = True


@functools.lru_cache(maxsize=1)
def host_cpu():
    """(cpu name, feature string) of this machine, as LLVM sees it."""
    init()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def host_target() -> dict:
    """This machine as an LLVM target description (`kind`, `mcpu`, `mattr`), the form TVM's
    `Target` takes: the CPU name alone is not enough, since a host may report `znver4` with
    AVX-512 disabled, and code for the name alone would then stop on an illegal instruction."""
    cpu, features = host_cpu()
    return {"kind": "llvm", "mcpu": cpu, "mattr": [f for f in features.split(",") if f]}


def target_machine(opt=3):
    init()
    cpu, features = host_cpu()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=opt, reloc="pic",
                                        codemodel="jitdefault")


def optimize(mod, tm, pipeline=None):
    """Run LLVM's default pipeline at the pipeline's level (see pipeline.py; default: full O3)."""
    from .pipeline import FULL
    p = pipeline or FULL
    pto = llvm.create_pipeline_tuning_options(speed_level=p.level)
    pto.loop_vectorization = p.vectorize
    pto.slp_vectorization = p.vectorize
    pto.loop_unrolling = p.unroll
    pb = llvm.create_pass_builder(tm, pto)
    pm = pb.getModulePassManager()
    pm.run(mod, pb)


def _parsed(text: str, tm):
    mod = llvm.parse_assembly(text)
    mod.triple = llvm.get_process_triple()
    mod.data_layout = str(tm.target_data)
    return mod


def compile_ir(text: str, pipeline=None, keep_ir: bool = True):
    """LLVM IR text -> (optimized native object code for the host CPU, the optimized IR text
    or None when not `keep_ir`)."""
    init()
    level = pipeline.level if pipeline is not None else 3
    tm = target_machine(level)
    mod = _parsed(text, tm)
    mod.verify()
    optimize(mod, tm, pipeline)
    return tm.emit_object(mod), (str(mod) if keep_ir else None)


def assembly(text: str, pipeline=None) -> str:
    init()
    tm = target_machine(pipeline.level if pipeline is not None else 3)
    mod = _parsed(text, tm)
    optimize(mod, tm, pipeline)
    return tm.emit_assembly(mod)


class Loaded:
    """An execution engine holding one kernel's object code; keep it alive while calling."""

    def __init__(self, obj: bytes):
        init()
        self.tm = target_machine()
        empty = llvm.parse_assembly("")
        empty.triple = llvm.get_process_triple()
        self.engine = llvm.create_mcjit_compiler(empty, self.tm)
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def address(self, name: str) -> int:
        return self.engine.get_function_address(name)

    def data_address(self, name: str) -> int:
        """The address of a global variable of the object code."""
        return self.engine.get_global_value_address(name)
