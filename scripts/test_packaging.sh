#!/usr/bin/env bash
# The packaging test: what a new user does with latsol, on this machine.
#
# 1. scripts/install.sh into a temporary prefix; the installed files, the
#    soname and the pkg-config and CMake metadata are checked.
# 2. examples-c/ as a separate CMake project against that prefix
#    (find_package(Latsol)): every C/C++ example against Latsol::latsol
#    (shared) and Latsol::latsol_static, the Fortran one against
#    Latsol::latsol_fortran; ctest runs them all. Then Latsol_USE_STATIC=ON
#    is checked to make Latsol::latsol the static library.
# 3. The same examples through pkg-config alone: `--cflags --libs latsol`
#    (shared), `--static` (a fully static executable), latsol-fortran.
# 4. The C and C++ examples again under valgrind (no errors, nothing
#    definitely or indirectly lost), or built with AddressSanitizer where
#    valgrind is missing.
# 5. QUDA's interface: libquda (soname libquda.so), its headers, quda.pc and
#    find_package(QUDA); examples-c/quda-api/ built as a QUDA user builds
#    (-I$PREFIX/include -L$PREFIX/lib -lquda, pkg-config quda, CMake
#    QUDA::quda, static libquda.a) and run on the golden data.
# 6. Many ranks: scripts/install.sh --mpi into a second prefix (the MPI
#    flavour in the pkg-config and CMake files, libquda linked to libmpi);
#    examples-c/mpi/ built with mpicc against it as MILC and tmLQCD build
#    against QUDA, run under mpirun -np 4 and 6 on the golden clover set;
#    examples-c/fortran/mpi_ranks.f90 with mpif90 (use mpi) on 2 ranks.
# Every example solves on the CPU backend and exits non-zero if its own
# residual check fails.
#
# Needs cmake, a C, C++ and Fortran compiler, pkg-config and valgrind; a
# missing tool skips its part with a NOTICE, unless LATSOL_REQUIRE_TOOLS=1
# (.ci/run sets it, having installed them all).
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/latsol-packaging.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
log=$work/log
cc=${CC:-cc}
cxx=${CXX:-c++}
fc=${FC:-gfortran}

# Runs a command with its output in $log, shown only if it fails (the
# compilers' and linkers' chatter would bury the results).
quiet() {
  if ! "$@" >"$log" 2>&1; then
    cat "$log"
    echo "FAILED: $*" >&2
    exit 1
  fi
}

have() {
  if command -v "$1" >/dev/null 2>&1; then
    return 0
  fi
  if [ "${LATSOL_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "FAILED: LATSOL_REQUIRE_TOOLS=1 and $1 is missing" >&2
    exit 1
  fi
  echo "NOTICE: $1 not found: $2 skipped"
  # The test command (scripts/test.sh) counts the skipped parts in its summary.
  [ -n "${LATSOL_SKIP_LOG:-}" ] && echo "packaging: $1 not found: $2 skipped" >>"$LATSOL_SKIP_LOG"
  return 1
}

# Runs an example and checks that it says it passed.
run_example() {
  local out
  out=$("$@" 2>&1) || {
    echo "$out"
    echo "FAILED: $*" >&2
    exit 1
  }
  grep -q "all checks passed" <<<"$out" || {
    echo "$out"
    echo "FAILED: $* did not report its checks" >&2
    exit 1
  }
  echo "  ok  $(basename "$1") ${*:2}"
}

needed_libs() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

echo "-- install into $prefix"
quiet bash scripts/install.sh "$prefix"
version=$(sed -n 's/^version = "\([^"]*\)"/\1/p' Cargo.toml | head -n1)
for f in lib/liblatsol.a "lib/liblatsol.so.$version" lib/liblatsol.so.0 lib/liblatsol.so \
  include/latsol.h share/latsol/fortran/latsol.f90 lib/pkgconfig/latsol.pc \
  lib/cmake/Latsol/LatsolConfig.cmake lib/cmake/Latsol/LatsolConfigVersion.cmake \
  bin/latsol-solve bin/latsol-heatbath; do
  [ -e "$prefix/$f" ] || { echo "FAILED: $f not installed" >&2; exit 1; }
done
cmp -s include/latsol.h "$prefix/include/latsol.h" ||
  { echo "FAILED: the installed header differs from include/latsol.h" >&2; exit 1; }
soname=$(readelf -d "$prefix/lib/liblatsol.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = liblatsol.so.0 ] || { echo "FAILED: soname '$soname', want liblatsol.so.0" >&2; exit 1; }
[ "$(readlink "$prefix/lib/liblatsol.so.0")" = "liblatsol.so.$version" ] ||
  { echo "FAILED: liblatsol.so.0 does not point to liblatsol.so.$version" >&2; exit 1; }
"$prefix/bin/latsol-solve" --version | grep -q "^latsol-solve " ||
  { echo "FAILED: the installed latsol-solve does not run" >&2; exit 1; }
# Stripped: no debug sections in what is installed; the shared library's
# debug information lies beside it and its .gnu_debuglink names that file.
for f in lib/liblatsol.a "lib/liblatsol.so.$version" bin/latsol-solve bin/latsol-heatbath; do
  if readelf -S "$prefix/$f" 2>/dev/null | grep -q '\.debug_info'; then
    echo "FAILED: the installed $f carries debug information" >&2
    exit 1
  fi
done
readelf -S "$prefix/lib/.debug/liblatsol.so.$version.debug" | grep -q '\.debug_info' ||
  { echo "FAILED: lib/.debug/liblatsol.so.$version.debug holds no debug information" >&2; exit 1; }
readelf --string-dump=.gnu_debuglink "$prefix/lib/liblatsol.so.$version" | grep -q "liblatsol.so.$version.debug" ||
  { echo "FAILED: liblatsol.so.$version has no .gnu_debuglink to its debug file" >&2; exit 1; }
echo "  ok  files, soname $soname, stripped (debug info split out), bin/latsol-solve runs"

if have cmake "the CMake build of the examples"; then
  echo "-- examples-c/ through find_package(Latsol) (CMake $(cmake --version | sed -n 's/cmake version //p'))"
  build=$work/cmake
  quiet cmake -S examples-c -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
  quiet cmake --build "$build" --parallel 2
  quiet bash -c "cd '$build' && ctest --output-on-failure"
  sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([a-z_]*\) .*Passed.*/  ok  \1 (ctest)/p' "$log"
  if [ -n "${LATSOL_REQUIRE_TOOLS:-}" ] && [ ! -x "$build/fortran_invert" ]; then
    echo "FAILED: the Fortran example was not built through CMake" >&2
    exit 1
  fi
  needed_libs "$build/milc_style_default" | grep -qx liblatsol.so.0 ||
    { echo "FAILED: Latsol::latsol is not the shared library" >&2; exit 1; }
  ! needed_libs "$build/milc_style_static" | grep -q latsol ||
    { echo "FAILED: Latsol::latsol_static links liblatsol.so" >&2; exit 1; }
  echo "  ok  Latsol::latsol records liblatsol.so.0; Latsol::latsol_static needs no liblatsol.so"

  quiet cmake -S examples-c -B "$work/cmake-static" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release -DLatsol_USE_STATIC=ON
  quiet cmake --build "$work/cmake-static" --target milc_style_default
  ! needed_libs "$work/cmake-static/milc_style_default" | grep -q latsol ||
    { echo "FAILED: Latsol_USE_STATIC=ON still links liblatsol.so" >&2; exit 1; }
  run_example "$work/cmake-static/milc_style_default" --backend cpu
  echo "  ok  Latsol_USE_STATIC=ON makes Latsol::latsol static"

  # The version file's verdicts: the installed version and older minors of
  # the same major are accepted, newer ones and other majors refused.
  cat >"$work/version.cmake" <<EOF
foreach(request 0.1 $version 0.0.1 0.99 1.0)
  string(REPLACE "." ";" parts "\${request}")
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  set(PACKAGE_FIND_VERSION "\${request}")
  unset(PACKAGE_VERSION_UNSUITABLE)
  include("$prefix/lib/cmake/Latsol/LatsolConfigVersion.cmake")
  message("\${request} \${PACKAGE_VERSION_COMPATIBLE}")
endforeach()
EOF
  verdicts=$(cmake -P "$work/version.cmake" 2>&1 | tr '\n' ' ')
  [ "$verdicts" = "0.1 TRUE $version TRUE 0.0.1 TRUE 0.99 FALSE 1.0 FALSE " ] ||
    { echo "FAILED: LatsolConfigVersion.cmake verdicts: $verdicts" >&2; exit 1; }
  echo "  ok  LatsolConfigVersion.cmake: $verdicts"
fi

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
pc_bin=$work/pkg-config
mkdir -p "$pc_bin"
if have pkg-config "the pkg-config build of the examples"; then
  echo "-- examples-c/ through pkg-config (latsol $(pkg-config --modversion latsol))"
  libdir=$(pkg-config --variable=libdir latsol)
  rpath=-Wl,-rpath,$libdir
  cflags="-O2 -Wall -Wextra -pedantic -Werror"
  for ex in invert milc_style milc_staggered cps_style multishift; do
    # shellcheck disable=SC2046,SC2086  # word splitting of the flags is meant
    quiet "$cc" -std=c99 $cflags "examples-c/$ex.c" -o "$pc_bin/$ex" \
      $(pkg-config --cflags --libs latsol) -lm "$rpath"
    run_example "$pc_bin/$ex" --backend cpu
  done
  if have "$cxx" "the pkg-config build of chroma_style.cpp"; then
    # shellcheck disable=SC2046,SC2086
    quiet "$cxx" -std=c++11 $cflags examples-c/chroma_style.cpp -o "$pc_bin/chroma_style" \
      $(pkg-config --cflags --libs latsol) "$rpath"
    run_example "$pc_bin/chroma_style" --backend cpu
  fi
  # A fully static executable: --static adds Libs.private (pthread, dl, m).
  # glibc warns that dlopen (how latsol finds CUDA) in a static program
  # needs the same glibc at run time; the CPU backend does not use it.
  # shellcheck disable=SC2046,SC2086
  quiet "$cc" -static -std=c99 $cflags examples-c/milc_style.c -o "$pc_bin/milc_style_static" \
    $(pkg-config --static --cflags --libs latsol) -lm
  if readelf -d "$pc_bin/milc_style_static" | grep -q NEEDED; then
    echo "FAILED: the --static build is not static" >&2
    exit 1
  fi
  run_example "$pc_bin/milc_style_static" --backend cpu
  if [ -f "$prefix/lib/pkgconfig/latsol-fortran.pc" ] && have "$fc" "the pkg-config Fortran build"; then
    # shellcheck disable=SC2046
    quiet "$fc" -std=f2018 -O2 -Wall -Werror examples-c/fortran/invert.f90 -o "$pc_bin/fortran_invert" \
      $(pkg-config --cflags --libs latsol-fortran) "$rpath"
    run_example "$pc_bin/fortran_invert"
  elif [ "${LATSOL_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "FAILED: latsol-fortran.pc was not installed" >&2
    exit 1
  fi
  # A moved prefix: latsol.pc is relative to its own folder (${pcfiledir}).
  moved=$work/moved-prefix
  cp -a "$prefix" "$moved"
  # shellcheck disable=SC2046,SC2086  # word splitting of the flags is meant
  PKG_CONFIG_PATH=$moved/lib/pkgconfig quiet "$cc" -std=c99 $cflags examples-c/invert.c \
    -o "$pc_bin/invert_moved" $(PKG_CONFIG_PATH=$moved/lib/pkgconfig pkg-config --cflags --libs latsol) \
    -lm "-Wl,-rpath,$moved/lib"
  moved_inc=$(PKG_CONFIG_PATH=$moved/lib/pkgconfig pkg-config --variable=includedir latsol)
  [ "$(realpath "$moved_inc")" = "$(realpath "$moved/include")" ] ||
    { echo "FAILED: a moved prefix's latsol.pc points to $moved_inc" >&2; exit 1; }
  run_example "$pc_bin/invert_moved" --backend cpu
fi

echo "-- the C and C++ examples under a memory checker"
examples=()
for ex in invert milc_style milc_staggered cps_style chroma_style multishift; do
  [ -x "$pc_bin/$ex" ] && examples+=("$ex")
done
if [ ${#examples[@]} -eq 0 ]; then
  echo "NOTICE: no example was built; nothing to check"
elif command -v valgrind >/dev/null 2>&1; then
  # "Possibly lost" blocks are not counted: the CPU backend's worker
  # threads are told to stop by latsol_end but not joined, and the exit
  # that follows at once can find a thread's TLS block still allocated.
  # Definite and indirect leaks and every memory error fail.
  for ex in "${examples[@]}"; do
    quiet valgrind --error-exitcode=97 --leak-check=full \
      --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
      "$pc_bin/$ex" --backend cpu
    sed -n 's/^==[0-9]*== \(ERROR SUMMARY: [0-9]* errors\).*/  ok  valgrind '"$ex"': \1/p' "$log"
  done
elif [ "${LATSOL_REQUIRE_TOOLS:-0}" = 1 ]; then
  echo "FAILED: LATSOL_REQUIRE_TOOLS=1 and valgrind is missing" >&2
  exit 1
else
  echo "NOTICE: no valgrind: AddressSanitizer (with LeakSanitizer) instead"
  for ex in "${examples[@]}"; do
    src="examples-c/$ex.c"
    comp=("$cc" -std=c99)
    if [ "$ex" = chroma_style ]; then
      src="examples-c/chroma_style.cpp"
      comp=("$cxx" -std=c++11)
    fi
    # shellcheck disable=SC2046
    quiet "${comp[@]}" -g -O1 -fsanitize=address -fno-omit-frame-pointer "$src" \
      -o "$work/asan_$ex" $(pkg-config --cflags --libs latsol) -lm -Wl,-rpath,"$libdir"
    ASAN_OPTIONS=detect_leaks=1 run_example "$work/asan_$ex" --backend cpu
  done
fi
echo "-- QUDA's interface: libquda, quda.h, quda.pc, find_package(QUDA)"
for f in lib/libquda.so lib/libquda.a include/quda.h include/enum_quda.h include/quda_constants.h \
  include/quda_define.h include/quda_milc_interface.h include/malloc_quda.h lib/pkgconfig/quda.pc \
  lib/cmake/QUDA/QUDAConfig.cmake lib/cmake/QUDA/QUDAConfigVersion.cmake; do
  [ -e "$prefix/$f" ] || { echo "FAILED: $f not installed" >&2; exit 1; }
done
qsoname=$(readelf -d "$prefix/lib/libquda.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$qsoname" = libquda.so ] || { echo "FAILED: libquda soname '$qsoname', want libquda.so" >&2; exit 1; }
if readelf -S "$prefix/lib/libquda.so" | grep -q '\.debug_info'; then
  echo "FAILED: the installed libquda.so carries debug information" >&2
  exit 1
fi
# Every function of the two headers is exported (unprovided ones stop naming themselves).
exported=$(nm -D --defined-only "$prefix/lib/libquda.so" | awk '{print $3}' | sort -u)
for fn in $(sed -n 's/^[a-zA-Z_ *]*[ *]\([a-zA-Z_0-9]*\)(.*);$/\1/p' include/quda.h include/quda_milc_interface.h include/malloc_quda.h); do
  grep -qx "$fn" <<<"$exported" || { echo "FAILED: libquda.so does not export $fn" >&2; exit 1; }
done
echo "  ok  files, soname $qsoname, every declared function exported"
golden=$PWD/tests/data
qbin=$work/quda-api
mkdir -p "$qbin"
quiet "$cc" -std=c99 -O2 -Wall -Wextra -Werror examples-c/quda-api/milc_style.c -o "$qbin/milc_style" \
  -I"$prefix/include" -L"$prefix/lib" -lquda -lm -Wl,-rpath,"$prefix/lib"
quiet "$cxx" -std=c++17 -O2 -Wall -Wextra -Werror examples-c/quda-api/chroma_style.cpp -o "$qbin/chroma_style" \
  -I"$prefix/include" -L"$prefix/lib" -lquda -Wl,-rpath,"$prefix/lib"
needed_libs "$qbin/milc_style" | grep -qx libquda.so ||
  { echo "FAILED: milc_style does not load libquda.so" >&2; exit 1; }
run_example "$qbin/milc_style" "$golden/golden-staggered-6x4x4x8" "$golden/golden-clover-6x4x4x8"
run_example "$qbin/chroma_style" "$golden/golden-clover-6x4x4x8"
quiet "$cc" -std=c99 -O2 -Wall -Wextra -Werror examples-c/quda-api/tmlqcd_style.c -o "$qbin/tmlqcd_style" \
  -I"$prefix/include" -L"$prefix/lib" -lquda -lm -Wl,-rpath,"$prefix/lib"
run_example "$qbin/tmlqcd_style" "$golden/golden-clover-6x4x4x8"
quiet "$cc" -std=c99 -O2 examples-c/quda-api/milc_style.c -o "$qbin/milc_style_static" \
  -I"$prefix/include" "$prefix/lib/libquda.a" -lpthread -ldl -lm
run_example "$qbin/milc_style_static" "$golden/golden-staggered-6x4x4x8" "$golden/golden-clover-6x4x4x8"
if command -v pkg-config >/dev/null 2>&1; then
  # shellcheck disable=SC2046
  quiet "$cxx" -std=c++17 -O2 examples-c/quda-api/chroma_style.cpp -o "$qbin/chroma_style_pc" \
    $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs quda) -Wl,-rpath,"$prefix/lib"
  run_example "$qbin/chroma_style_pc" "$golden/golden-clover-6x4x4x8"
fi
if command -v cmake >/dev/null 2>&1; then
  quiet cmake -S examples-c/quda-api -B "$work/cmake-quda" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release
  quiet cmake --build "$work/cmake-quda" --parallel 2
  quiet ctest --test-dir "$work/cmake-quda" --output-on-failure
  echo "  ok  find_package(QUDA) with QUDA::quda: ctest passed"
fi
[ "$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --variable=mpi latsol 2>/dev/null || echo none)" = none ] ||
  { echo "FAILED: the single-process install records an MPI" >&2; exit 1; }

if have mpicc "the MPI install and its examples" && have mpirun "the MPI examples"; then
  echo "-- many ranks: install.sh --mpi, examples-c/mpi/ with mpicc under mpirun -np 4"
  mprefix=$work/prefix-mpi
  quiet bash scripts/install.sh --mpi "$mprefix"
  flavour=$(PKG_CONFIG_PATH=$mprefix/lib/pkgconfig pkg-config --variable=mpi quda)
  [ -n "$flavour" ] && [ "$flavour" != none ] ||
    { echo "FAILED: quda.pc of the --mpi install records no MPI" >&2; exit 1; }
  grep -q '^set(Latsol_MPI ON)' "$mprefix/lib/cmake/Latsol/LatsolConfig.cmake" &&
    grep -q '^set(QUDA_MPI ON)' "$mprefix/lib/cmake/QUDA/QUDAConfig.cmake" ||
    { echo "FAILED: the CMake packages of the --mpi install do not say MPI" >&2; exit 1; }
  needed_libs "$mprefix/lib/libquda.so" | grep -q '^libmpi' ||
    { echo "FAILED: the --mpi libquda.so does not load libmpi" >&2; exit 1; }
  echo "  ok  --mpi install: $flavour recorded (latsol.pc, quda.pc, Latsol_MPI, QUDA_MPI), libquda loads libmpi"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  mbin=$work/mpi
  mkdir -p "$mbin"
  # MILC's way (pkg-config quda) and tmLQCD's (-I, -L, -lquda).
  # shellcheck disable=SC2046
  quiet mpicc -std=c99 -O2 -Wall -Wextra -Werror examples-c/mpi/milc_mpi.c -o "$mbin/milc_mpi" \
    $(PKG_CONFIG_PATH=$mprefix/lib/pkgconfig pkg-config --cflags --libs quda) -lm -Wl,-rpath,"$mprefix/lib"
  quiet mpicc -std=c99 -O2 -Wall -Wextra -Werror examples-c/mpi/tmlqcd_mpi.c -o "$mbin/tmlqcd_mpi" \
    -I"$mprefix/include" -L"$mprefix/lib" -lquda -lm -Wl,-rpath,"$mprefix/lib"
  for run in "milc_mpi 1,2,1,2" "tmlqcd_mpi 1,1,2,2" "tmlqcd_mpi 3,1,1,2"; do
    # shellcheck disable=SC2086  # a program and its grid
    set -- $run
    np=$(tr ',' '\n' <<<"$2" | awk '{n *= $1} BEGIN {n = 1} END {print n}')
    out=$(timeout 120 mpirun --oversubscribe -np "$np" "$mbin/$1" "$golden/golden-clover-6x4x4x8" "$2" 2>&1) ||
      { echo "$out"; echo "FAILED: mpirun -np $np $1 $2" >&2; exit 1; }
    grep -q "all checks passed" <<<"$out" || { echo "$out"; echo "FAILED: $1 $2" >&2; exit 1; }
    echo "  ok  mpirun -np $np $1 (grid $2)"
  done
  # Fortran: the communicator as `use mpi` holds it (MPI_Comm_f2c inside).
  if [ -f "$mprefix/lib/pkgconfig/latsol-fortran.pc" ] && have mpif90 "the Fortran MPI example"; then
    # shellcheck disable=SC2046
    quiet mpif90 -O2 -Wall examples-c/fortran/mpi_ranks.f90 -o "$mbin/fortran_mpi_ranks" \
      $(PKG_CONFIG_PATH=$mprefix/lib/pkgconfig pkg-config --cflags --libs latsol-fortran) \
      -Wl,-rpath,"$mprefix/lib"
    out=$(timeout 120 mpirun --oversubscribe -np 2 "$mbin/fortran_mpi_ranks" 2>&1) ||
      { echo "$out"; echo "FAILED: mpirun -np 2 fortran_mpi_ranks" >&2; exit 1; }
    grep -q "all checks passed" <<<"$out" || { echo "$out"; echo "FAILED: fortran_mpi_ranks" >&2; exit 1; }
    echo "  ok  mpirun -np 2 fortran_mpi_ranks (use mpi; fortran_comm)"
  fi
fi
echo "packaging: all passed"
