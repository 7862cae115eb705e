"""ONNX Runtime's `MatMulInteger` (MLAS) u8 x s8 -> s32, one thread, in a process of its own,
on its default path or kept off AMX:

    python benchmarks/ort_int8.py --n 1024 --reps 9 [--no-amx]     # prints one JSON object:
    # {"version", "seconds": {"input": [[wall, cpu], ...], "initializer": [...]},
    #  "xcomp_perm", "amx_enabled"}

MLAS picks its int8 kernels when it starts: on a CPU with AMX it asks Linux for the AMX tile
state (`arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`) and uses its AMX kernels when
that succeeds, its AVX-512 VNNI kernels (then AVX-VNNI, AVX2) otherwise.  `--no-amx` installs,
before onnxruntime is imported, a seccomp filter under which exactly that request fails with
EPERM (every other system call, and every other arch_prctl, is allowed), so MLAS falls back to
its VNNI kernels: the like-for-like anchor for a kernel built on `vpdpbusd`.  The process
reports the permission the kernel granted afterwards (`ARCH_GET_XCOMP_PERM`): bit 18
(XTILEDATA) set means AMX was enabled for it, clear means no AMX instruction could have run
(one would fault).  Every result is checked against numpy before it is timed.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import struct
import time

import numpy as np

ARCH_GET_XCOMP_PERM = 0x1022
ARCH_REQ_XCOMP_PERM = 0x1023
XFEATURE_XTILEDATA = 18
SYS_ARCH_PRCTL = 158                    # x86_64
AUDIT_ARCH_X86_64 = 0xC000003E
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EPERM = 1
# classic BPF opcodes
LD_W_ABS = 0x20
JEQ_K = 0x15
RET_K = 0x06


def _insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


def deny_amx_request():
    """Install the seccomp filter: arch_prctl(ARCH_REQ_XCOMP_PERM, ...) -> EPERM."""
    prog = b"".join([
        _insn(LD_W_ABS, 0, 0, 4),                      # seccomp_data.arch
        _insn(JEQ_K, 0, 5, AUDIT_ARCH_X86_64),
        _insn(LD_W_ABS, 0, 0, 0),                      # seccomp_data.nr
        _insn(JEQ_K, 0, 3, SYS_ARCH_PRCTL),
        _insn(LD_W_ABS, 0, 0, 16),                     # low word of args[0]
        _insn(JEQ_K, 0, 1, ARCH_REQ_XCOMP_PERM),
        _insn(RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        _insn(RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ])
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(prog, len(prog))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fprog = Fprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "installing the seccomp filter failed")


def xcomp_perm() -> int | None:
    """The extended-state components this process may use (None where the kernel cannot say)."""
    libc = ctypes.CDLL(None, use_errno=True)
    mask = ctypes.c_uint64(0)
    if libc.syscall(SYS_ARCH_PRCTL, ARCH_GET_XCOMP_PERM, ctypes.byref(mask)) != 0:
        return None
    return mask.value


def one_thread_session(model):
    """An ONNX Runtime session of `model` (an onnx ModelProto) on one intra-op and one
    inter-op thread, sequential, on the CPU provider: the setting of every ORT anchor."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])


def times(fn, reps):
    """[wall-clock seconds, CPU seconds of the calling thread] of `reps` runs after one
    warm-up run (with one intra-op thread ORT runs the kernel on the calling thread)."""
    fn()
    ts = []
    for _ in range(reps):
        t, c = time.perf_counter(), time.thread_time()
        fn()
        ts.append([time.perf_counter() - t, time.thread_time() - c])
    return ts


def measure(n, reps, seed=0):
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    A = rng.integers(1, 128, (n, n)).astype("uint8")
    B = rng.integers(-128, 128, (n, n)).astype("int8")
    ref = (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)
    rows = {}
    for const in (False, True):
        inputs = [helper.make_tensor_value_info("A", TensorProto.UINT8, [n, n])]
        inits = []
        if const:
            inits.append(numpy_helper.from_array(B, "B"))
        else:
            inputs.append(helper.make_tensor_value_info("B", TensorProto.INT8, [n, n]))
        node = helper.make_node("MatMulInteger", ["A", "B"], ["C"])
        graph = helper.make_graph([node], "g", inputs,
                                  [helper.make_tensor_value_info("C", TensorProto.INT32, [n, n])],
                                  initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        s = one_thread_session(model)
        feed = {"A": A} if const else {"A": A, "B": B}
        out = s.run(None, feed)[0]
        if not np.array_equal(out, ref):
            raise AssertionError("MatMulInteger disagrees with numpy")
        rows["initializer" if const else "input"] = times(lambda: s.run(None, feed), reps)
    return ort.__version__, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--no-amx", action="store_true")
    args = ap.parse_args()
    if args.no_amx:
        deny_amx_request()
    version, rows = measure(args.n, args.reps)
    perm = xcomp_perm()
    print(json.dumps({"version": version, "seconds": rows, "no_amx": args.no_amx,
                      "xcomp_perm": perm,
                      "amx_enabled": None if perm is None else bool(perm >> XFEATURE_XTILEDATA & 1)}))


if __name__ == "__main__":
    main()
