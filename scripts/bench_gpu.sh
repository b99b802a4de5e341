#!/usr/bin/env bash
# The H100 figures of docs/performance.md and docs/multishift.md, step by
# step on a machine with a GPU. Every step is sized to finish within one
# 9-minute call of the device tool (issue 18); run them one call each, or
# several in a call where their times (below, measured on the H100) add up
# to less. Binaries from `cargo build --release --bins` (or BIN=dir);
# tables and logs go to OUT (default ./bench-out); the thermalised fields
# to FIELDS (default ./bench-out/fields, kept between calls on a warm
# machine: step `fields` makes them once, and a step that needs one it
# does not find makes it first, 3 minutes more).
#
#   bash scripts/bench_gpu.sh STEP...   (default: every step, in order)
#
# Steps: fields checks first-start whole-call quda-call small-volumes dslash-24
#        dslash-32 mixed clover-dslash clover-pion clover-mixed multishift
#        staggered staggered-solves table1 many-gpus many-gpus-weak many-gpus-strong   (`dslash` =
#        both dslash steps, `clover` = the three clover steps: each pair is more than one
#        call; the `many-gpus` steps need a machine of several GPUs and are not in the
#        default list)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release}
OUT=${OUT:-bench-out}
FIELDS=${FIELDS:-bench-out/fields}
mkdir -p "$OUT" "$FIELDS"
export OUT
# Compiled kernels and tuned launches, kept between the steps.
export LATSOL_CACHE_DIR=${LATSOL_CACHE_DIR:-$FIELDS/cache}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(fields checks first-start whole-call quda-call small-volumes dslash-24 dslash-32 mixed
  clover-dslash clover-pion clover-mixed multishift staggered staggered-solves)

# The thermalised 32^3x64 quenched beta = 6.0 field of the solve tables
# (about 3 minutes on 16 cores) and the 24^3x48 one of the staggered solves.
field=$FIELDS/cfg32/su3_wilson_b6.0000_32x32x32x64_seed2027.000025.nersc
field24=$FIELDS/cfg24/su3_wilson_b6.0000_24x24x24x48_seed44.000041.nersc
thermalised_field() {
  [ -f "$field" ] || "$BIN/latsol-heatbath" --dims 32,32,32,64 --beta 6.0 --therm 24 \
    --sweeps-between 1 --configs 1 --seed 2027 --out "$FIELDS/cfg32" --threads "$(nproc)" \
    >"$OUT/heatbath32.txt"
}
thermalised_field24() {
  [ -f "$field24" ] || "$BIN/latsol-heatbath" --dims 24,24,24,48 --beta 6.0 --therm 40 \
    --configs 1 --sweeps-between 1 --seed 44 --out "$FIELDS/cfg24" --threads "$(nproc)" >/dev/null
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

expanded=()
for step in "${steps[@]}"; do
  case "$step" in
  dslash) expanded+=(dslash-24 dslash-32) ;;
  clover) expanded+=(clover-dslash clover-pion clover-mixed) ;;
  *) expanded+=("$step") ;;
  esac
done

for step in "${expanded[@]}"; do
  started=$SECONDS
  case "$step" in
  fields) # the thermalised fields the solve steps read (about 3 + 1 minutes on 16 cores)
    thermalised_field
    thermalised_field24
    ls -la "$FIELDS"/cfg*/
    ;;
  table1) # seed 002's Table 1 analogue (issue 37): the 12 components of a point source as L x 12/L,
    # without and with SAP, clover c_SW 1.769 near kappa_c on the 24^3x48 field (KAPPA, BLOCKS,
    # SAP_CYCLES to change; each row at most TO seconds)
    thermalised_field24
    for sap in "" "--sap-cycles ${SAP_CYCLES:-6}"; do
      for L in ${BLOCKS:-1 2 3 4 6 12}; do
        # shellcheck disable=SC2086  # the options are words
        timeout "${TO:-240}" "$BIN/latsol-solve" --backend cuda --field "$field24" \
          --kappa "${KAPPA:-0.1351}" --csw 1.769 --tol 1e-10 --precision double --sloppy single \
          --maxiter 30000 -q --sources 12 --block "$L" $sap 2>&1 |
          grep -E "^sources|latsol-solve:" || echo "L = $L $sap: no summary"
      done
    done | tee "$OUT/table1.txt"
    ;;
  checks) # every kernel against the CPU backend; GPU and CPU solves side by side
    "$BIN/latsol-gpu-check" --no-bench | tee "$OUT/checks.txt" | grep -E "failure|^start"
    ;;
  dslash-24 | dslash-32) # hopping term and vector operations beside the copy roofline
    dims=24,24,24,24
    [ "$step" = dslash-32 ] && dims=32,32,32,64
    "$BIN/latsol-gpu-check" --bench-only --dims "$dims" --tag "$dims" >"$OUT/dslash-$dims.txt"
    grep -E "^(24x|32x)|^blas" "$OUT/dslash-$dims.txt"
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
  clover-dslash) # the Wilson-clover hopping term, double/single/half at 24^4 and 32^3x64 (about 90 s)
    for p in double single half; do
      for dims in 24,24,24,24 32,32,32,64; do
        "$BIN/latsol-gpu-check" --bench-only --quick --clover --prec "$p" --dims "$dims" |
          grep -E "clover A"
      done
    done | tee "$OUT/clover-dslash.txt"
    ;;
  clover-pion) # pion masses on the thermalised field: Wilson at 0.155, clover (c_SW 1.6) at CLOVER_KAPPAS
    thermalised_field
    kappas=${CLOVER_KAPPAS:-0.1355 0.1365}
    "$BIN/latsol-bench-mixed" --backend cuda --field "$field" --tables pion --kappas 0.155 \
      --tol 1e-10 2>/dev/null | tee "$OUT/pion-wilson.txt"
    "$BIN/latsol-bench-mixed" --backend cuda --field "$field" --tables pion --csw "${CSW:-1.6}" \
      --kappas "${kappas// /,}" --tol 1e-10 2>/dev/null | tee "$OUT/pion-clover.txt"
    ;;
  clover-mixed) # clover solves of each scheme on the thermalised field at CLOVER_KAPPAS
    thermalised_field
    kappas=${CLOVER_KAPPAS:-0.1355 0.1365}
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
  many-gpus | many-gpus-weak | many-gpus-strong)
    # Issue 36, on a machine of 2 or 4 GPUs (nvidia-h100-x2/-x4), the example built with
    # `cargo build --release --features mpi --example gpu_ranks` (EXAMPLES=dir); each step one
    # device call. `many-gpus`: every hopping term against one GPU bit for bit and the solves,
    # with each transport (4 minutes on an empty kernel cache). `many-gpus-weak`: the clover
    # M-hat, the asqtad D, the Wilson D and the two mixed solves at 32^4 and 48^4 a GPU on 2 and
    # 4 GPUs, each against the same local volume alone on its GPU (7 minutes, most of it the
    # host making the 48^4 fields). `many-gpus-strong`: 32^3x64 on 1, 2 and 4 GPUs, single.
    # Open MPI binds each of 1 or 2 ranks to one core: the host work then crawls (a 32^4 bench
    # did not end in 100 s), hence --bind-to none.
    ex=${EXAMPLES:-target/release/examples}/gpu_ranks
    gpus=$(nvidia-smi -L | wc -l)
    run="mpirun --allow-run-as-root --oversubscribe --bind-to none -x LATSOL_CACHE_DIR -x LATSOL_HALO -x GPU_RANKS_PRECISION"
    log="$OUT/$step.txt"
    case "$step" in
    many-gpus)
      for halo in peer host; do
        LATSOL_HALO=$halo $run -np 2 "$ex" --grid 1,1,1,2 | tee -a "$log"
      done
      # Four ranks (on two GPUs where there are two): ahead and behind are
      # different ranks; cuts in one, two and three directions.
      for g in 1,1,1,4 1,1,2,2 2,1,1,2 1,2,2,1; do
        LATSOL_SHARE_DEVICES=1 $run -x LATSOL_SHARE_DEVICES -np 4 "$ex" --grid $g | tee -a "$log"
      done
      ;;
    many-gpus-weak)
      for local in 32,32,32,32 48,48,48,48; do
        grids="1,1,1,2:2"
        [ "$gpus" -ge 4 ] && grids="$grids 1,1,1,4:4"
        [ "$gpus" -ge 4 ] && [ "$local" = 32,32,32,32 ] && grids="$grids 1,1,2,2:4"
        for g in $grids; do
          $run -np "${g#*:}" "$ex" --grid "${g%:*}" --bench "$local" | tee -a "$log"
        done
      done
      ;;
    many-gpus-strong)
      runs="1,1,1,1:1:32,32,32,64 1,1,1,2:2:32,32,32,32"
      [ "$gpus" -ge 4 ] && runs="$runs 1,1,1,4:4:32,32,32,16 1,1,2,2:4:32,32,16,32"
      for r in $runs; do
        IFS=: read -r g n local <<<"$r"
        GPU_RANKS_PRECISION=Single $run -np "$n" "$ex" --grid "$g" --bench "$local" | tee -a "$log"
      done
      ;;
    esac
    ;;
  staggered-solves) # CG and multi-shift CG on asqtad links of a 24^3x48 field (about 5 minutes)
    thermalised_field24
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
  quda-call) # the same through QUDA's interface (loadGaugeQuda, invertQuda), 32^3x64 (about 1 minute)
    for s in "--solution mat --sloppy half" "--solution matpc --sloppy half" \
      "--solution mat --sloppy single --cg" "--solution mat --sloppy half --csw 1.0"; do
      # shellcheck disable=SC2086  # the options are words
      "$BIN/latsol-bench-quda" --dims 32,32,32,64 --repeat 3 -v $s
    done | tee "$OUT/quda-call.txt"
    # ASQTAD fat and long links through loadGaugeQuda, then MATPC CG.
    "$BIN/latsol-bench-quda" --dims 32,32,32,64 --asqtad 0.1 --sloppy half --tol 1e-10 --loads 2 \
      --repeat 2 | tee -a "$OUT/quda-call.txt"
    ;;
  small-volumes) # the half hopping term at 16^4, 20^4, 24^4 (one thread a site; the split and wide forms and the tuned choice too at 16^4) and the launch study (about 3 minutes)
    for dims in 16,16,16,16 20,20,20,20 24,24,24,24; do
      LATSOL_DSLASH_FORM=plain "$BIN/latsol-gpu-check" --bench-only --quick --no-solve --prec half --dims "$dims" |
        grep -E "^[0-9]+x"
    done | tee "$OUT/small-volumes.txt"
    for form in split wide tuned; do
      LATSOL_DSLASH_FORM=$form "$BIN/latsol-gpu-check" --bench-only --quick --no-solve --prec half \
        --dims 16,16,16,16 | grep -E "^[0-9]+x" | sed "s/^/$form: /" | tee -a "$OUT/small-volumes.txt"
    done
    "$BIN/latsol-gpu-check" --launch-study | grep "launch study" | tee -a "$OUT/small-volumes.txt"
    ;;
  *)
    echo "unknown step $step (see the steps at the top of $0)" >&2
    exit 2
    ;;
  esac
  echo "== step $step: $((SECONDS - started)) s"
done
