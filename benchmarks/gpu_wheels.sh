#!/usr/bin/env bash
# Fetch what benchmarks/gpu_check.sh installs on the GPU machine (no registry there) into
# benchmarks/gpu_wheels (git-ignored; carried to the machine with the checkout):
#   benchmarks/gpu_wheels.sh          (about 1 minute; a throw-away venv prepares pycuda's sdist)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=$ROOT/benchmarks/gpu_wheels
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 -m venv "$TMP/venv"
PY=$TMP/venv/bin/python
"$PY" -m pip install -q setuptools wheel numpy
mkdir -p "$DEST"
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    pytools platformdirs mako siphash24 lark ml_dtypes markupsafe typing_extensions -d "$DEST"
"$PY" -m pip download -q --no-deps --no-build-isolation --no-binary=pycuda pycuda==2026.1 \
    -d "$DEST"
ls -1 "$DEST"
