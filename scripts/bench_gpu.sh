#!/usr/bin/env bash
# The H100 figures of docs/performance.md and docs/multishift.md, in one
# run on a machine with a GPU (over 20 minutes on an H100: step `dslash`
# alone took more than 8; the 32^3x64 field takes 3 minutes on 16 cores;
# step `clover` over 10, split by CLOVER_DSLASH=0, CLOVER_PION=0 and
# CLOVER_KAPPAS="k1 k2" into calls of under 10 minutes). Binaries from `cargo build --release
# --bins` (or BIN=dir); tables and logs go to OUT (default ./bench-out).
#
#   bash scripts/bench_gpu.sh [checks|dslash|dslash-24|dslash-32|mixed|multishift|clover|staggered|staggered-solves|first-start|whole-call]...   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release}
OUT=${OUT:-bench-out}
mkdir -p "$OUT"
export OUT
# Compiled kernels and tuned launches, kept between the steps.
export LATSOL_CACHE_DIR=${LATSOL_CACHE_DIR:-$OUT/cache}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(first-start whole-call checks dslash-24 dslash-32 mixed multishift clover staggered staggered-solves)

# The thermalised 32^3x64 quenched beta = 6.0 field of the solve tables
# (about 3 minutes on 16 cores, made once per OUT).
field=$OUT/cfg32/su3_wilson_b6.0000_32x32x32x64_seed2027.000025.nersc
thermalised_field() {
  [ -f "$field" ] || "$BIN/latsol-heatbath" --dims 32,32,32,64 --beta 6.0 --therm 24 \
    --sweeps-between 1 --configs 1 --seed 2027 --out "$OUT/cfg32" --threads "$(nproc)" \
    >"$OUT/heatbath32.txt"
}

# Times one scheme of latsol-solve on the field: a short solve first tunes
# the launches (cached), so the timed one measures the solver alone.
timed_solve() {
  # shellcheck disable=SC2068  # the options are words
  "$BIN/latsol-solve" --field "$field" --every 0 --maxiter 40 $@ >/dev/null 2>&1 || true
  # shellcheck disable=SC2068
  "$BIN/latsol-solve" --field "$field" --every 0 $@ 2>&1 | grep summary ||
    echo "$*: no summary (see the solver's output)"
}

for step in "${steps[@]}"; do
  case "$step" in
  checks) # every kernel against the CPU backend; GPU and CPU solves side by side
    "$BIN/latsol-gpu-check" --no-bench | tee "$OUT/checks.txt" | grep -E "failure|^start"
    ;;
  dslash | dslash-24 | dslash-32) # hopping term and vector operations beside the copy roofline
    # (`dslash` is both volumes; each alone fits one call of the device tool)
    case "$step" in
    dslash-24) volumes=(24,24,24,24) ;;
    dslash-32) volumes=(32,32,32,64) ;;
    *) volumes=(24,24,24,24 32,32,32,64) ;;
    esac
    for dims in "${volumes[@]}"; do
      "$BIN/latsol-gpu-check" --bench-only --dims "$dims" --tag "$dims" >"$OUT/dslash-$dims.txt"
      grep -E "^(24x|32x)|^blas" "$OUT/dslash-$dims.txt"
    done
    ;;
  mixed) # time to solution of each scheme on a thermalised 32^3x64 field
    thermalised_field
    schemes=(
      "--solver bicgstab"
      "--solver bicgstab --sloppy single --reconstruct-sloppy 12"
      "--solver bicgstab --sloppy single --reconstruct-sloppy 8"
      "--solver bicgstab --sloppy half --reconstruct-sloppy 12"
      "--solver bicgstab --sloppy half --reconstruct-sloppy 8"
      "--solver bicgstab --sloppy quarter --reconstruct-sloppy 12"
      "--solver bicgstab --sloppy half --reconstruct-sloppy 12 --mixed defect --tol-inner 0.1"
      "--solver cg"
      "--solver cg --sloppy single --reconstruct-sloppy 12"
      "--solver cg --sloppy half --reconstruct-sloppy 12"
      "--solver cg --sloppy quarter --reconstruct-sloppy 12"
      "--solver cg --sloppy half --reconstruct-sloppy 12 --mixed defect --tol-inner 0.1"
      "--solver bicgstab --sloppy packed20 --reconstruct-sloppy 12"
      "--solver bicgstab --sloppy packed30 --reconstruct-sloppy 12"
      "--solver cg --sloppy packed20 --reconstruct-sloppy 12"
    )
    for s in "${schemes[@]}"; do
      # shellcheck disable=SC2086  # the options are words
      timed_solve --kappa 0.155 $s
    done | tee "$OUT/mixed.txt"
    ;;
  clover) # the Wilson-clover hopping term; pion masses and mixed solves on the thermalised field (c_SW 1.6)
    # CLOVER_DSLASH=0 skips the hopping-term tables (a call of its own: about 90 s).
    if [ "${CLOVER_DSLASH:-1}" != 0 ]; then
      for p in double single half; do
        for dims in 24,24,24,24 32,32,32,64; do
          "$BIN/latsol-gpu-check" --bench-only --quick --clover --prec "$p" --dims "$dims" |
            grep -E "clover A"
        done
      done | tee "$OUT/clover-dslash.txt"
    fi
    thermalised_field
    # The pion masses: Wilson at the kappa of the mixed step, clover at CLOVER_KAPPAS.
    kappas=${CLOVER_KAPPAS:-0.1355 0.1365}
    # CLOVER_PION=0 skips them (about 30 s per kappa).
    if [ "${CLOVER_PION:-1}" != 0 ]; then
      "$BIN/latsol-bench-mixed" --backend cuda --field "$field" --tables pion --kappas 0.155 \
        --tol 1e-10 2>/dev/null | tee "$OUT/pion-wilson.txt"
      "$BIN/latsol-bench-mixed" --backend cuda --field "$field" --tables pion --csw "${CSW:-1.6}" \
        --kappas "${kappas// /,}" --tol 1e-10 2>/dev/null | tee "$OUT/pion-clover.txt"
    fi
    for kappa in $kappas; do
      for s in "--solver bicgstab" "--solver bicgstab --sloppy single --reconstruct-sloppy 12" \
        "--solver bicgstab --sloppy half --reconstruct-sloppy 12" "--solver cg" \
        "--solver cg --sloppy half --reconstruct-sloppy 12"; do
        # shellcheck disable=SC2086  # the options are words
        timed_solve --csw "${CSW:-1.6}" --kappa "$kappa" $s
      done
    done | tee "$OUT/clover-mixed.txt"
    ;;
  multishift) # clark2022 Table 3 and alexandru2011 Table 3 styles, 24^3x48
    "$BIN/latsol-multishift-bench" --backend cuda --dims 24,24,24,48 --kappa 0.1625 \
      --table both --repeat 1 --mc -0.9369 | tee "$OUT/multishift.txt"
    ;;
  staggered) # the staggered hopping term: checks, double/single/half with long links 18/13/9 (about 5 minutes)
    "$BIN/latsol-gpu-check" --staggered --check-prec double --no-solve --quick --prec double \
      --dims 32,32,32,64 >"$OUT/staggered-checks.txt"
    grep -E "^staggered|failure" "$OUT/staggered-checks.txt"
    for run in single:32,32,32,64 half:32,32,32,64 single:48,48,48,96 half:48,48,48,96; do
      "$BIN/latsol-gpu-check" --staggered --bench-only --no-solve --quick --prec "${run%%:*}" \
        --dims "${run#*:}" | grep -E "^staggered (Single|Half)" | tee -a "$OUT/staggered-bench.txt"
    done
    ;;
  staggered-solves) # CG and multi-shift CG on asqtad links of a 24^3x48 field (about 5 minutes)
    field24=$OUT/cfg24/su3_wilson_b6.0000_24x24x24x48_seed44.000041.nersc
    [ -f "$field24" ] || "$BIN/latsol-heatbath" --dims 24,24,24,48 --beta 6.0 --therm 40 \
      --configs 1 --sweeps-between 1 --seed 44 --out "$OUT/cfg24" --threads "$(nproc)" >/dev/null
    "$BIN/latsol-bench-staggered" --backend cuda --field "$field24" --masses 0.1,0.03,0.01 \
      --tables cg --tol 1e-10 --repeat 2 | tee "$OUT/staggered-solves.txt"
    "$BIN/latsol-bench-staggered" --backend cuda --field "$field24" --masses 0.01 \
      --tables multishift --per-shift --tol 1e-10 --repeat 2 | tee -a "$OUT/staggered-solves.txt"
    ;;
  first-start) # the first solve of a program on an empty kernel cache, then on a full one (about 1 minute)
    for s in "--solver bicgstab" "--solver bicgstab --sloppy half --reconstruct-sloppy 12" \
      "--solver cg --sloppy single --reconstruct-sloppy 12" "--solver bicgstab --csw 1.0"; do
      empty=$(mktemp -d)
      for cache in empty full; do
        # shellcheck disable=SC2086  # the options are words
        LATSOL_CACHE_DIR=$empty "$BIN/latsol-solve" --dims 16,16,16,16 --field smooth -q $s \
          | sed "s/^summary:/$cache cache: $s |/"
      done
      rm -rf "$empty"
    done | tee "$OUT/first-start.txt"
    ;;
  whole-call) # the invert call beside the solver inside it, 16^4, 24^4, 32^3x64 (about 2 minutes)
    for dims in 16,16,16,16 24,24,24,24 32,32,32,64; do
      for s in "--solver bicgstab" "--solver bicgstab --sloppy single --reconstruct-sloppy 12" \
        "--solver bicgstab --sloppy half --reconstruct-sloppy 12" "--solver cg" \
        "--solver cg --sloppy single --reconstruct-sloppy 12" "--solver cg --sloppy half --reconstruct-sloppy 12"; do
        # shellcheck disable=SC2086  # the options are words
        "$BIN/latsol-solve" --dims "$dims" --kappa 0.12 --repeat 3 -q $s | tail -1
      done
    done | tee "$OUT/whole-call.txt"
    ;;
  *)
    echo "unknown step $step (checks|dslash|dslash-24|dslash-32|mixed|multishift|clover|staggered|staggered-solves|first-start|whole-call)" >&2
    exit 2
    ;;
  esac
done
