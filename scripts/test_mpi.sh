#!/usr/bin/env bash
# The multi-rank tests (part of the test command): latsol built with the
# `mpi` feature against the machine's MPI, its programs run under mpirun on
# 1, 2, 4 and 8 ranks (oversubscribed: CI has 2 cores), each under a
# timeout so that a hang fails instead of waiting. Needs mpicc, mpirun and
# libclang (.ci/run installs Debian's Open MPI and clang); without them the
# part is skipped and logged, or fails where LATSOL_REQUIRE_TOOLS=1.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=""
for tool in mpicc mpirun; do command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"; done
if [ -n "$missing" ]; then
  msg="multi-rank tests: no$missing (apt-get install libopenmpi-dev openmpi-bin libclang-dev clang)"
  if [ "${LATSOL_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "$msg" >&2
    exit 1
  fi
  echo "skipped: $msg"
  [ -n "${LATSOL_SKIP_LOG:-}" ] && echo "$msg" >>"$LATSOL_SKIP_LOG"
  exit 0
fi

# gpu_ranks is built and linted here, run on the GPU machines (scripts/bench_gpu.sh many-gpus).
examples=(--example comm_ranks --example cpu_ranks --example abi_ranks --example quda_ranks
  --example staggered_ranks --example gpu_ranks)
cargo clippy --release --features mpi --lib "${examples[@]}" --bin latsol-solve -- -D warnings
cargo build --release --features mpi "${examples[@]}" --bin latsol-solve --bin latsol-heatbath
bin=target/release/examples/comm_ranks
cpu=target/release/examples/cpu_ranks
abi=target/release/examples/abi_ranks
quda=target/release/examples/quda_ranks
ks=target/release/examples/staggered_ranks
# Open MPI refuses root unless told; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# No network probing on a sandboxed machine: shared memory and self only.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
run() {
  local np=$1
  shift
  timeout 60 mpirun --oversubscribe -np "$np" "$@"
}
run 1 "$bin" --grid 1,1,1,1
run 2 "$bin" --grid 1,1,1,2
run 2 "$bin" --grid 2,1,1,1 --map x
run 4 "$bin" --grid 1,1,2,2
run 4 "$bin" --grid 1,2,2,1 --map x
run 8 "$bin" --grid 2,2,1,2
run 8 "$bin" --grid 1,2,2,2 --map x
# The CPU backend on cut lattices against one rank: cuts in 1, 2 and 3
# directions, a local extent of 2 (x), both rank maps, both kinds of sums.
run 1 "$cpu" --grid 1,1,1,1
run 2 "$cpu" --grid 2,1,1,1
run 2 "$cpu" --grid 1,1,1,2 --deterministic
run 4 "$cpu" --grid 1,1,2,2
run 4 "$cpu" --grid 2,2,1,1 --map x --deterministic
run 8 "$cpu" --grid 2,1,2,2
run 8 "$cpu" --grid 1,2,2,2 --map x --deterministic
# latsol.h on cut lattices (MILC-order local parts, a pointer to the host's
# communicator, its own rank map): plaquette, the clover operator computed
# from cut links, BiCGstab and CG against one process, collective errors.
run 1 "$abi" --grid 1,1,1,1
run 2 "$abi" --grid 1,1,1,2
run 2 "$abi" --grid 1,2,1,1 --map x --deterministic
run 4 "$abi" --grid 1,1,2,2
run 4 "$abi" --grid 2,1,1,2 --deterministic
run 8 "$abi" --grid 2,1,2,2
run 8 "$abi" --grid 2,2,2,1 --map x
# The staggered operators through latsol.h on cut lattices (4^4 a rank,
# phases folded by latsol with global coordinates, long links |s| x U(3)):
# M, CG in double and double-half, multi-shift CG, improved and naive,
# against one process; local extent 2 refused in a cut direction.
run 1 "$ks" --grid 1,1,1,1
run 2 "$ks" --grid 2,1,1,1 --deterministic
run 4 "$ks" --grid 1,1,2,2
run 8 "$ks" --grid 1,2,2,2 --deterministic
# QUDA's interface on cut lattices, the golden clover set (6x4x4x8) in
# local parts: quda.h with QUDA's default rank order and tmLQCD's Cartesian
# map (plaquette, MatQuda against the golden data, invertQuda and
# invertMultiShiftQuda against one rank, collective errors), and MILC's face
# (qudaInit with the global size and machine grid; plaquette, Polyakov
# loop, qudaCloverInvert); the golden staggered set (asqtad) through
# invertQuda on a grid cutting t. Local extents of 2 in x (grid 3), t (4).
run 1 "$quda" --grid 1,1,1,1
run 2 "$quda" --grid 1,1,1,2 --staggered
run 4 "$quda" --grid 1,1,2,2 --map cart
run 4 "$quda" --grid 1,1,1,4
run 6 "$quda" --grid 3,1,1,2 --map cart
run 8 "$quda" --grid 1,2,2,2
run 1 "$quda" --grid 1,1,1,1 --face milc
run 2 "$quda" --grid 1,1,1,2 --face milc
run 3 "$quda" --grid 3,1,1,1 --face milc
run 8 "$quda" --grid 1,2,2,2 --face milc
# The CLI on a grid: NERSC, MILC and ILDG files read by every rank in
# parts, the checksum, plaquette and link trace checked over all ranks; the
# clover term computed from cut links. Each converges in the iterations of
# one process; a NERSC or ILDG file with a corrupted byte fails on every
# rank (no hang).
files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT
for format in "nersc --file-precision double" "milc --file-precision single" "ildg"; do
  # shellcheck disable=SC2086  # the format and its precision
  target/release/latsol-heatbath --dims 4,4,4,8 --beta 6.0 --therm 5 --configs 1 \
    --sweeps-between 1 --seed 3 --out "$files" --format $format >/dev/null
done
# "iterations N" of a converged solve.
iterations() { grep -o 'iterations [0-9]* .*| converged$' | grep -o '^iterations [0-9]*'; }
for field in "$files"/*.nersc "$files"/*.milc "$files"/*.ildg; do
  solve=(target/release/latsol-solve --backend cpu --field "$field" --kappa 0.12 --csw 1.0
    --tol 1e-10 -q)
  alone=$("${solve[@]}" | iterations)
  for grid in 1,1,1,2 1,1,2,2 2,1,2,2; do
    np=$(tr ',' '\n' <<<"$grid" | awk '{n *= $1} BEGIN {n = 1} END {print n}')
    cut=$(run "$np" "${solve[@]}" --grid "$grid" | iterations)
    [ -n "$cut" ] && [ "$cut" = "$alone" ] ||
      { echo "latsol-solve ${field##*.} --grid $grid: '$cut', one process '$alone'" >&2; exit 1; }
  done
  echo "latsol-solve --field (${field##*.}) on 2, 4 and 8 ranks: converged, $alone (as one process)"
done
for format in nersc ildg; do
  bad=$files/corrupt.$format
  cp "$files"/*."$format" "$bad"
  size=$(stat -c %s "$bad")
  printf '\x55' | dd of="$bad" bs=1 seek=$((size - 1000)) conv=notrunc status=none
  if out=$(run 4 target/release/latsol-solve --backend cpu --field "$bad" --grid 1,1,2,2 -q 2>&1); then
    echo "a corrupted $format file was accepted on 4 ranks" >&2
    exit 1
  fi
  grep -q "checksum mismatch" <<<"$out" ||
    { echo "$out"; echo "a corrupted $format file: no checksum error" >&2; exit 1; }
  echo "latsol-solve: a corrupted $format file fails on every rank (checksum mismatch over the ranks)"
done
echo "multi-rank tests: passed"
