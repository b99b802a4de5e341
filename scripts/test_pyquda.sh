#!/usr/bin/env bash
# A real QUDA client built unchanged against latsol: PyQUDA (CLQCD/PyQUDA,
# from PyPI) installs nothing of QUDA's but reads the installed quda.h,
# enum_quda.h, quda_define.h and malloc_quda.h, generates its Cython
# wrapper of every function and struct from them, and links -lquda. Then two
# programs of this repository (scripts/pyquda/) call it as its users do, on
# the CPU (PyQUDA's numpy backend): a Wilson solve of the golden set (x is
# 2κ ψ in PyQUDA's asymmetric mass normalization) and a clover solve with
# the clover term computed by the library, its residual recomputed through
# PyQUDA's MatQuda. Nothing of PyQUDA is kept in this repository.
#
# Needs: network access to PyPI (pyquda, cython, mpi4py), an MPI library
# for mpi4py (Debian: libopenmpi3 openmpi-bin), gcc. Not part of .ci/run.
#
#   bash scripts/test_pyquda.sh [WORKDIR]      (default: a temporary folder)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${1:-$(mktemp -d)}
mkdir -p "$work"
version=${PYQUDA_VERSION:-0.10.54}

echo "-- latsol installed into $work/prefix"
bash scripts/install.sh "$work/prefix" >"$work/install.log"
echo "-- PyQUDA $version from PyPI, built against it (QUDA_PATH=$work/prefix)"
python3 -m pip install -q cython numpy mpi4py
(cd "$work" && python3 -m pip download -q --no-deps "pyquda==$version" -d .)
tar -xzf "$work/pyquda-$version.tar.gz" -C "$work"
src=$work/pyquda-$version
(cd "$src" && QUDA_PATH=$work/prefix python3 setup.py build_ext --inplace >"$work/build.log" 2>&1) ||
  { tail -20 "$work/build.log"; echo "FAILED: PyQUDA did not build" >&2; exit 1; }
echo "-- solves through PyQUDA (numpy backend, CPU)"
mkdir -p "$work/resource"
for t in wilson_golden clover_residual; do
  LATSOL_QUDA_ON_ERROR=return python3 "scripts/pyquda/$t.py" "$src" "$root/tests/data" "$work/resource" |
    grep -v "^PyQUDA INFO"
done
echo "PyQUDA checks passed"
