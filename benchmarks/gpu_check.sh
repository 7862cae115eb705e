#!/usr/bin/env bash
# Every GPU kernel of the examples on the GPU machine, checked and timed (see gpu_check.py).
#
#   benchmarks/gpu_check.sh [WHEELS_DIR]      results: $OUT/gpu_check.md (or benchmarks/results)
#
# WHEELS_DIR (default benchmarks/gpu_wheels) holds, fetched on a machine with a registry:
#   pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --platform manylinux2014_x86_64 pytools platformdirs mako siphash24 lark ml_dtypes \
#       markupsafe typing_extensions -d benchmarks/gpu_wheels
#   pip download --no-deps --no-build-isolation pycuda==2026.1 -d benchmarks/gpu_wheels
# (the sdist: from a venv with setuptools, wheel and numpy).  pycuda is built from the sdist
# against the machine's CUDA (CUDA_ROOT, default /usr/local/cuda-13.0).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHEELS=$(cd "${1:-$ROOT/benchmarks/gpu_wheels}" && pwd)
RESULTS=${OUT:-$ROOT/benchmarks/results}
WORK=$(mktemp -d)
SITE=$WORK/site
python3 -m pip install -q --no-index --no-deps --target "$SITE" "$WHEELS"/*.whl
tar xzf "$WHEELS"/pycuda-*.tar.gz -C "$WORK"
cd "$WORK"/pycuda-*/
python3 configure.py --cuda-root="${CUDA_ROOT:-/usr/local/cuda-13.0}" >/dev/null
python3 setup.py -q build_ext --inplace -j 16 >"$WORK/pycuda-build.log" 2>&1 \
    || { tail -30 "$WORK/pycuda-build.log"; exit 1; }
export PYTHONPATH="$PWD:$SITE:$ROOT/language${PYTHONPATH:+:$PYTHONPATH}"
export PATH="${CUDA_ROOT:-/usr/local/cuda-13.0}/bin:$PATH"
cd "$ROOT"
python3 benchmarks/gpu_check.py --out "$RESULTS/gpu_check.md"
