#!/usr/bin/env bash
# MILC's own regression tests, with MILC built against a latsol install as a
# MILC user builds it against QUDA (WANTQUDA=true, QUDA_HOME at the install):
# su3_clov (clover_invert2) and ks_spectrum_hisq (ks_spectrum), PRECISION 1
# and 2, judged by MILC's own rules (check.pl with the application's
# checklist: Make_test_template, headtail.pl, diffn3.pl against sample-out and
# errtol). Issue 39's acceptance test. Run by hand: it fetches MILC develop
# 9782cb0 and USQCD's QMP, QIO and c-lime (MILC includes qio.h whatever its
# switches), which CI cannot reach. Nothing fetched is kept in this
# repository; everything lives under WORKDIR.
#
#   bash scripts/test_milc.sh [WORKDIR]          (default: target/milc)
#
# Environment:
#   MILC_BUILDS      builds to run (default: all six):
#                    plain       MILC without QUDA (the control)
#                    solvers     the solvers offloaded: WANT_CL_BCG_GPU, WANT_FN_CG_GPU
#                    milc_script the switches of MILC's own
#                                ks_spectrum/compile_ks_spectrum_hisq_quda.sh
#                                (FN_CG, FL, GF, FF, GAUGEFIX_OVR, mixed
#                                precision 2, KS_MULTICG=HYBRID with
#                                MULTISOURCE) plus CL_BCG, one process
#                    milc_script_milc_gauge
#                                the same, run with
#                                LATSOL_GAUGE_FIX_TRAJECTORY=milc: the gauge
#                                fixed along MILC's own sequence of steps
#                    all_gpu     every WANT_*_GPU switch of MILC's Makefile
#                                (but multigrid): CL_BCG, FN_CG, GA, GF, FL,
#                                FF, EIG, GSMEAR, KS_CONT, SHIFT, SPIN_TASTE,
#                                GAUGEFIX_OVR
#                    all_gpu_milc_gauge   the same with MILC's gauge-fixing path
#                    (gauge-fixed sources depend on the fixing's path, not
#                    only on the gauge condition: QUDA's path cannot give
#                    MILC's sample-outs; docs/milc-gauge-fixing.md,
#                    "Which links")
#   MILC_PRECISIONS  default "1 2"
#   MILC_PROGRAMS    default "su3_clov ks_spectrum_hisq"
#   MILC_GIT, QMP_GIT, QIO_GIT, CLIME_GIT
#                    a local git directory holding the pinned commit (a
#                    mirror) instead of cloning from GitHub; blobs such a
#                    mirror lacks (large binary samples no test here reads)
#                    are left out
#
# Needs: git, gcc/g++, cmake, perl, FFTW 3 (Debian: libfftw3-dev), and what
# `cargo build --release` needs. No CUDA toolkit: MILC is built with
# OFFLOAD=none (docs/quda-compat.md); latsol runs on the CPU unless it finds
# a GPU driver.
#
# Two sample-outs of MILC 9782cb0 are stale (su3_clov onium and
# ks_spectrum_hisq spectrum2 fail against plain MILC too): for the QUDA
# builds those two are also compared, with the same errtol and diffn3.pl,
# against plain MILC's own output of this run, and that comparison decides.
#
# Build facts (found building MILC 9782cb0 on Debian 12, gcc 12):
# - MILC's default compilers are gcc-8/g++-8: MY_CC=gcc MY_CXX=g++.
# - FFTW's location: FFTW=$(pkg-config --variable=prefix fftw3).
# - generic/quark_source_sink_op.c uses `gammatype` without its typedef:
#   a forced-include header declares it (C only).
# - clover_invert2 prints its -DPRTIME lines inside the regions its tests
#   compare: CTIME is MILC's default without -DPRTIME, in every build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(realpath -m "${1:-target/milc}")
mkdir -p "$work"
builds=${MILC_BUILDS:-plain solvers milc_script milc_script_milc_gauge all_gpu all_gpu_milc_gauge}
precisions=${MILC_PRECISIONS:-1 2}
programs=${MILC_PROGRAMS:-su3_clov ks_spectrum_hisq}
jobs=$(nproc)

milc_commit=9782cb0049f730b4634e9420a5b882f9c1a2bdad
qmp_commit=3010fef5b5784b3e6eeec9fff38cb9954a28ad42
qio_commit=273841537392f9465d229c957228755e923408eb
clime_commit=924aa0fce27a6cd73d94c9adc4b995f00e13232b

# source NAME URL COMMIT LOCAL_GIT_DIR: the tree of COMMIT under $work/src/NAME
source_tree() {
  local name=$1 url=$2 commit=$3 gitdir=$4 dest=$work/src/$1
  [ -e "$dest/.latsol-complete" ] && return 0
  rm -rf "$dest" "$dest.git"
  mkdir -p "$dest"
  if [ -z "$gitdir" ]; then
    git clone -q "$url" "$dest.git"
    gitdir=$dest.git/.git
  fi
  local missing
  missing=$(git --git-dir="$gitdir" ls-tree -r "$commit" |
    awk '$2 == "blob" {print $3}' |
    git --git-dir="$gitdir" cat-file --batch-check='%(objectname)' 2>/dev/null |
    awk '/ missing$/ {print $1}' || true)
  local excludes=()
  if [ -n "$missing" ]; then
    while read -r path; do
      excludes+=(":(exclude)$path")
      echo "   $name: $path not in $gitdir, left out"
    done < <(git --git-dir="$gitdir" ls-tree -r "$commit" |
      awk 'NR == FNR {miss[$1] = 1; next} ($3 in miss) {print $4}' <(echo "$missing") -)
  fi
  git --git-dir="$gitdir" archive "$commit" -- . "${excludes[@]}" 2>/dev/null | tar -x -C "$dest"
  rm -rf "$dest.git"
  touch "$dest/.latsol-complete"
}

echo "-- sources (MILC ${milc_commit:0:7}, QMP ${qmp_commit:0:7}, QIO ${qio_commit:0:7}, c-lime ${clime_commit:0:7})"
source_tree milc_qcd https://github.com/milc-qcd/milc_qcd.git $milc_commit "${MILC_GIT:-}"
source_tree qmp https://github.com/usqcd-software/qmp.git $qmp_commit "${QMP_GIT:-}"
source_tree qio https://github.com/usqcd-software/qio.git $qio_commit "${QIO_GIT:-}"
source_tree c-lime https://github.com/usqcd-software/c-lime.git $clime_commit "${CLIME_GIT:-}"

echo "-- QMP (single process) and QIO (scalar, with c-lime) into $work/scidac"
scidac=$work/scidac
if [ ! -e "$scidac/.latsol-complete" ]; then
  rm -rf "$work/build-scidac" "$scidac"
  cmake -S "$work/src/qmp" -B "$work/build-scidac/qmp" -DCMAKE_INSTALL_PREFIX="$scidac/qmp-single" \
    -DCMAKE_BUILD_TYPE=Release -DQMP_MPI=OFF -DQMP_TESTING=OFF >"$work/build-scidac.log" 2>&1
  cmake --build "$work/build-scidac/qmp" -j "$jobs" --target install >>"$work/build-scidac.log" 2>&1
  rm -rf "$work/src/qio/other_libs/c-lime"
  cp -r "$work/src/c-lime" "$work/src/qio/other_libs/c-lime"
  cmake -S "$work/src/qio" -B "$work/build-scidac/qio" -DCMAKE_INSTALL_PREFIX="$scidac/qio-single" \
    -DCMAKE_BUILD_TYPE=Release -DQIO_BUILD_TESTS=OFF >>"$work/build-scidac.log" 2>&1
  cmake --build "$work/build-scidac/qio" -j "$jobs" --target install >>"$work/build-scidac.log" 2>&1
  touch "$scidac/.latsol-complete"
fi

echo "-- latsol installed into $work/latsol"
bash scripts/install.sh "$work/latsol" >"$work/install.log"

# The forced-include header of the gammatype typedef MILC lacks.
fixes=$work/milc_fixes.h
cat >"$fixes" <<'EOF'
/* scripts/test_milc.sh: MILC 9782cb0's generic/quark_source_sink_op.c uses
   the type name `gammatype` that no header of MILC typedefs. */
#ifndef __cplusplus
enum gammatype;
typedef enum gammatype gammatype;
#endif
EOF

# the make variables of each build (exported: MILC's Makefile reads them with ?=)
build_env() {
  vars=(MY_CC=gcc MY_CXX=g++ OFFLOAD=none "FFTW=$(pkg-config --variable=prefix fftw3)"
    WANTQIO=true WANTQMP=true "QIOSNG=$scidac/qio-single" "QMPSNG=$scidac/qmp-single"
    "OPT=-O3 -include $fixes"
    "CTIME=-DNERSC_TIME -DCGTIME -DFFTIME -DFLTIME -DGFTIME -DREMAP -DIOTIME")
  case $1 in
    plain) vars+=(WANTQUDA=false) ;;
    solvers) vars+=(WANTQUDA=true "QUDA_HOME=$work/latsol" WANT_CL_BCG_GPU=true WANT_FN_CG_GPU=true) ;;
    milc_script | milc_script_milc_gauge)
      vars+=(WANTQUDA=true "QUDA_HOME=$work/latsol" WANT_FN_CG_GPU=true WANT_FL_GPU=true
        WANT_GF_GPU=true WANT_FF_GPU=true WANT_GAUGEFIX_OVR_GPU=true WANT_CL_BCG_GPU=true
        WANT_MIXED_PRECISION_GPU=2 "KSCGMULTI=-DKS_MULTICG=HYBRID -DMULTISOURCE")
      [ "$1" = milc_script ] || vars+=(LATSOL_GAUGE_FIX_TRAJECTORY=milc)
      ;;
    all_gpu | all_gpu_milc_gauge)
      vars+=(WANTQUDA=true "QUDA_HOME=$work/latsol" WANT_CL_BCG_GPU=true WANT_FN_CG_GPU=true
        WANT_GA_GPU=true WANT_GF_GPU=true WANT_FL_GPU=true WANT_FF_GPU=true WANT_EIG_GPU=true
        WANT_GSMEAR_GPU=true WANT_KS_CONT_GPU=true WANT_SHIFT_GPU=true WANT_SPIN_TASTE_GPU=true
        WANT_GAUGEFIX_OVR_GPU=true)
      [ "$1" = all_gpu ] || vars+=(LATSOL_GAUGE_FIX_TRAJECTORY=milc)
      ;;
    *)
      echo "unknown build $1" >&2
      exit 2
      ;;
  esac
}

app_dir() {
  case $1 in
    su3_clov) echo clover_invert2 ;;
    ks_spectrum_hisq) echo ks_spectrum ;;
    *)
      echo "unknown program $1" >&2
      exit 2
      ;;
  esac
}

# The checklist's entries of one program and precision (exec lines and their
# extra-output lines), for check.pl.
checklist_of() {
  awk -v exe="$1" -v prec="$2" '
    /^#/ {next}
    $1 == "exec" {keep = ($2 == exe && $3 == prec)}
    ($1 == "exec" || $1 == "extra-output") && keep {print}' checklist
}

# The outputs compared for one checklist: exec.case.prec and the extra files.
compared_of() {
  awk '$1 == "exec" {print ($5 == "-") ? $2 "." $3 : $2 "." $5 "." $3}
       $1 == "extra-output" {print $2}' | awk '!seen[$0]++'
}

# stale sample-outs of MILC 9782cb0: judged against plain MILC's output
stale() {
  case $1 in
    su3_clov.onium.* | ks_spectrum_hisq.spectrum2.*) return 0 ;;
    *) return 1 ;;
  esac
}

for build in $builds; do
  tree=$work/milc-$build
  [ -d "$tree" ] || cp -r "$work/src/milc_qcd" "$tree"
  build_env "$build"
  for program in $programs; do
    app=$(app_dir "$program")
    cp "$tree/Makefile" "$tree/$app/Makefile"
    for prec in $precisions; do
      echo "-- $build: $program PRECISION=$prec"
      summary=$work/summary.$build.$program.$prec.txt
      : >"$summary"
      # MILC 9782cb0 with WANT_EIG_GPU does not compile at PRECISION=1
      # (generic_ks/eigen_stuff_QUDA.c defines ks_eigensolve_QUDA with
      # double * eigenvalues, include/imp_ferm_links.h declares Real *):
      # left out there; no test here asks for eigenpairs.
      pvars=("${vars[@]}")
      if [ "$prec" = 1 ]; then
        pvars=()
        for v in "${vars[@]}"; do [ "$v" = WANT_EIG_GPU=true ] || pvars+=("$v"); done
      fi

      tests=$tree/$app/test
      log=$work/$build.$program.$prec.log
      (cd "$tests" && checklist_of "$program" "$prec" >"checklist.latsol.$program.$prec")
      compared=$(compared_of <"$tests/checklist.latsol.$program.$prec")
      for name in $compared; do rm -f "$tests/$name".test-*; done
      (cd "$tests" && env "${pvars[@]}" perl ../../check.pl <"checklist.latsol.$program.$prec" >"$log" 2>&1) || true
      for name in $compared; do
        if grep -q "\[.*$name.test-out\] Error" "$log"; then
          result="FAIL (the program stopped with an error: $(grep -m1 -E 'not a supported|^Failed|abort|ERROR|error:' "$tests/$name.test-out" || echo 'see the log'))"
        elif grep -q "^$name.test-tmp OK" "$log"; then
          result=pass
        else
          result="FAIL ($(grep -m1 -E "^$name.test-tmp NOT OK|^ERROR|Premature|longer than" "$log" || echo "no output compared"))"
        fi
        if stale "$name" && [ "$build" != plain ]; then
          plain=$work/milc-plain/$app/test/$name.test-tmp
          if [ -s "$plain" ] && perl "$tree/diffn3.pl" "$tests/$name.test-tmp" "$plain" "$tests/$name.errtol" \
            >"$tests/$name.test-diff-plain" 2>"$tests/$name.test-diff-plain.status" &&
            grep -q " OK$" "$tests/$name.test-diff-plain.status" && ! grep -q "NOT OK" "$tests/$name.test-diff-plain.status"; then
            result="pass (against plain MILC; against sample-out: $result)"
          else
            result="FAIL (against plain MILC: $(cat "$tests/$name.test-diff-plain.status" 2>/dev/null | head -1); against sample-out: $result)"
          fi
        fi
        echo "$build $name $result" | tee -a "$summary"
      done
    done
  done
done
echo "-- results (every build run into $work so far; logs $work/BUILD.PROGRAM.PRECISION.log)"
# one row an output compared, one column a build; "plain MILC fails too"
# where the control does not pass it either (a MILC matter, not latsol's)
cat "$work"/summary.*.*.[12].txt | awk '
  {build = $1; name = $2; $1 = ""; $2 = ""; sub(/^  /, ""); result[name, build] = $0
   if (!(name in seen)) {seen[name] = 1; order[++n] = name}}
  END {
    nb = split("plain solvers milc_script milc_script_milc_gauge all_gpu all_gpu_milc_gauge", builds, " ")
    for (i = 1; i <= n; i++) {
      name = order[i]; control = result[name, "plain"]
      for (b = 1; b <= nb; b++) {
        r = result[name, builds[b]]
        if (r == "") continue
        if (builds[b] != "plain" && control ~ /^FAIL/ && r ~ /^FAIL/ && name !~ /onium|spectrum2/) r = r " [plain MILC fails too]"
        printf "%-44s %-22s %s\n", name, builds[b], r
      }
    }
  }' | tee "$work/results.txt"
