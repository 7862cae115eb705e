#!/usr/bin/env bash
# The GPU machine's one command: builds pycuda, then checks and times every GPU kernel of the
# project against the thread interpreter / numpy, with cuBLAS anchors measured in the same run.
#
#   benchmarks/gpu_check.sh [WHEELS_DIR]
#
# Results (markdown to paste into BENCHMARKS.md, plus the logs) go to $OUT, else
# benchmarks/results: gpu_check.md, gpu_anchors.json, gpu_cli.txt.  Unattended, about
# 4-5 minutes on an H200 (pycuda build ~90 s, anchors ~20 s, ~50 kernels ~2 min).
#
# WHEELS_DIR (default benchmarks/gpu_wheels, git-ignored: carry it with the checkout) holds
# what the machine, which has no registry, installs; benchmarks/gpu_wheels.sh fetches it:
# pycuda's sdist and the wheels of pytools, platformdirs, mako, siphash24, lark, ml_dtypes,
# markupsafe, typing_extensions for Python 3.12.  pycuda is built from the sdist against the
# machine's CUDA (CUDA_ROOT, default /usr/local/cuda-13.0); torch (there already) measures
# the cuBLAS anchors.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHEELS=$(cd "${1:-$ROOT/benchmarks/gpu_wheels}" && pwd)
RESULTS=${OUT:-$ROOT/benchmarks/results}
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda-13.0}
mkdir -p "$RESULTS"
WORK=$(mktemp -d)
SITE=$WORK/site
T0=$(date +%s)
stamp() { echo "[gpu_check $(( $(date +%s) - T0 )) s] $*"; }

# 1. cuBLAS anchors first, in their own process (torch, before pycuda holds a context)
stamp "cuBLAS anchors"
timeout 120 python3 "$ROOT/benchmarks/gpu_anchors.py" --out "$RESULTS/gpu_anchors.json" \
    || stamp "anchors failed (the table goes without cuBLAS shares)"

# 2. pycuda from its sdist, the pure-Python needs from wheels
stamp "installing wheels, building pycuda"
python3 -m pip install -q --no-index --no-deps --target "$SITE" "$WHEELS"/*.whl
tar xzf "$WHEELS"/pycuda-*.tar.gz -C "$WORK"
cd "$WORK"/pycuda-*/
python3 configure.py --cuda-root="$CUDA_ROOT" >/dev/null
python3 setup.py -q build_ext --inplace -j 16 >"$RESULTS/pycuda-build.log" 2>&1 \
    || { tail -30 "$RESULTS/pycuda-build.log"; exit 1; }
export PYTHONPATH="$PWD:$SITE:$ROOT/language${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$CUDA_ROOT/bin:$PATH"
export TIRKIT_CACHE_DIR="$WORK/cache"
cd "$ROOT"
stamp "pycuda built"

# 3. the command line on the GPU: run --check and bench through pycuda
{
    python3 -m tirkit.cli run --target cuda --check examples/gpu_row_sum.py
    python3 -m tirkit.cli run --target cuda --check benchmarks/gpu_kernels/wmma_gemm.py \
        --func gpu_wmma_gemm_128
    python3 -m tirkit.cli bench --target cuda benchmarks/gpu_kernels/gemm.py --func gpu_gemm_4096
    python3 -m tirkit.cli bench --target cuda benchmarks/gpu_kernels/wmma_gemm.py \
        --func gpu_wmma_gemm_4096
} 2>&1 | tee "$RESULTS/gpu_cli.txt" || true
stamp "command line done"

# 4. every GPU kernel: validated with the device's limits, checked, timed
status=0
timeout 420 python3 benchmarks/gpu_check.py --out "$RESULTS/gpu_check.md" \
    --anchors "$RESULTS/gpu_anchors.json" || status=$?
stamp "done (status $status)"
exit $status
