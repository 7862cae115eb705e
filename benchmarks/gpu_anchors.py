"""cuBLAS anchors on the GPU (through torch, in its own process): GEMM 4096^3 in fp32 with
TF32 off, fp16 and bf16; median of 20 after 3 warm-ups, CUDA events.

    python3 benchmarks/gpu_anchors.py --out $OUT/gpu_anchors.json
"""
from __future__ import annotations

import argparse
import json
import sys


def gemm(torch, n, dtype, repeat=20, warmup=3):
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    for _ in range(warmup):
        a @ b
    times = []
    for _ in range(repeat):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        a @ b
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    times.sort()
    sec = times[len(times) // 2]
    return {"ms": sec * 1e3, "tflops": 2 * n ** 3 / sec / 1e12}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=4096)
    args = ap.parse_args(argv)
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no GPU")
    except Exception as e:
        print(f"gpu_anchors: {e}", file=sys.stderr)
        json.dump({"error": str(e)}, open(args.out, "w"))
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    out = {"device": torch.cuda.get_device_name(), "n": args.n,
           "float32": gemm(torch, args.n, torch.float32),
           "float16": gemm(torch, args.n, torch.float16),
           "bfloat16": gemm(torch, args.n, torch.bfloat16)}
    json.dump(out, open(args.out, "w"), indent=1)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
