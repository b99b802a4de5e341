#!/usr/bin/env bash
# Installs latsol under a prefix, for C, C++ and Fortran programs:
#
#   cargo build --release
#   bash scripts/install.sh [--mpi] PREFIX
#
# --mpi: latsol and libquda built with the cargo feature `mpi` against the
# machine's MPI (mpicc's), for programs that run on many ranks; the MPI
# flavour is recorded in latsol.pc and quda.pc (variable `mpi`, and
# Requires.private on its pkg-config module) and in the CMake packages
# (Latsol_MPI, Latsol_MPI_FLAVOUR; QUDA_MPI, QUDA_MPI_FLAVOUR, with
# find_dependency(MPI)). Without it the libraries are single-process.
#
# PREFIX/lib/liblatsol.a, liblatsol.so.<version> with its soname link
#   liblatsol.so.<major> and the link-time name liblatsol.so;
# PREFIX/include/latsol.h;
# PREFIX/share/latsol/fortran/latsol.f90 (the Fortran module's source) and,
#   where gfortran is found, include/latsol/fortran/latsol.mod with
#   lib/liblatsol_fortran.a and lib/pkgconfig/latsol-fortran.pc;
# PREFIX/lib/pkgconfig/latsol.pc;
# PREFIX/lib/cmake/Latsol/LatsolConfig.cmake and LatsolConfigVersion.cmake;
# QUDA's interface (docs/quda-compat.md): PREFIX/lib/libquda.so (soname
#   libquda.so, as QUDA's) and libquda.a, PREFIX/include/quda.h,
#   enum_quda.h, quda_constants.h, quda_define.h, quda_milc_interface.h, malloc_quda.h,
#   PREFIX/lib/pkgconfig/quda.pc and PREFIX/lib/cmake/QUDA/QUDAConfig.cmake
#   (find_package(QUDA), target QUDA::quda), so that QUDA_HOME=PREFIX works.
#
# Installed libraries and programs are stripped of debug information: the
# shared library's goes to PREFIX/lib/.debug/liblatsol.so.<version>.debug,
# found by gdb through the library's .gnu_debuglink; the archive and the
# programs carry none (rebuild in place for a debug build).
#
# It runs `cargo build --release --lib` first (nothing to do after the
# build above), so what it installs always matches the sources and the
# header. Set FC to pick another gfortran, FC= (empty) to skip the
# compiled module.
set -euo pipefail
mpi=OFF
if [ "${1:-}" = --mpi ]; then
  mpi=ON
  shift
fi
if [ $# -ne 1 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: bash scripts/install.sh [--mpi] PREFIX" >&2
  exit 2
fi
prefix=$(realpath -m "$1")
cd "$(dirname "$0")/.."
root=$PWD

version=$(sed -n 's/^version = "\([^"]*\)"/\1/p' Cargo.toml | head -n1)
major=${version%%.*}
target=${CARGO_TARGET_DIR:-$root/target}
lib=$target/release

features=()
quda_features=()
mpi_flavour=none
mpi_pc_module=""
if [ "$mpi" = ON ]; then
  command -v mpicc >/dev/null 2>&1 ||
    { echo "install.sh --mpi: no mpicc (Debian: apt-get install libopenmpi-dev libclang-dev clang)" >&2; exit 1; }
  features=(--features mpi)
  quda_features=(--features latsol/mpi)
  # The flavour as the MPI compiler names itself, and its pkg-config module.
  if said=$(mpicc -showme:version 2>/dev/null); then
    mpi_flavour=$(sed -n 's/.*\(Open MPI [0-9.]*\).*/\1/p' <<<"$said")
    mpi_pc_module=ompi-c
  elif said=$(mpichversion --version 2>/dev/null || mpicc -v 2>&1 | grep -i mpich); then
    mpi_flavour="MPICH $(grep -o '[0-9][0-9.]*' <<<"$said" | head -n1)"
    mpi_pc_module=mpich
  else
    mpi_flavour="unknown MPI"
  fi
  [ -n "$mpi_flavour" ] || mpi_flavour="Open MPI"
fi
if [ "$mpi" = ON ]; then
  # Only what is installed: the other programs stay single-process.
  cargo build --release --lib --bin latsol-solve --bin latsol-heatbath --quiet "${features[@]}"
else
  cargo build --release --lib --bins --quiet
fi
cargo build --release -p quda --quiet ${quda_features[@]+"${quda_features[@]}"}
for f in liblatsol.a liblatsol.so libquda.a libquda.so latsol-solve latsol-heatbath; do
  [ -f "$lib/$f" ] || { echo "install.sh: $lib/$f was not built" >&2; exit 1; }
done

install -d "$prefix/lib/pkgconfig" "$prefix/lib/cmake/Latsol" "$prefix/lib/cmake/QUDA" "$prefix/include" \
  "$prefix/share/latsol/fortran" "$prefix/bin"
# The main job and the gauge-field generator.
install -m 755 "$lib/latsol-solve" "$prefix/bin/latsol-solve"
install -m 755 "$lib/latsol-heatbath" "$prefix/bin/latsol-heatbath"
install -m 644 "$lib/liblatsol.a" "$prefix/lib/liblatsol.a"
install -m 755 "$lib/liblatsol.so" "$prefix/lib/liblatsol.so.$version"
ln -sf "liblatsol.so.$version" "$prefix/lib/liblatsol.so.$major"
ln -sf "liblatsol.so.$major" "$prefix/lib/liblatsol.so"
install -m 644 include/latsol.h "$prefix/include/latsol.h"
# QUDA's interface: the library under QUDA's names and its headers.
install -m 644 "$lib/libquda.a" "$prefix/lib/libquda.a"
install -m 755 "$lib/libquda.so" "$prefix/lib/libquda.so"
for h in quda.h enum_quda.h quda_constants.h quda_define.h quda_milc_interface.h malloc_quda.h; do
  install -m 644 "include/$h" "$prefix/include/$h"
done

# Debug information: split out of the shared library, off elsewhere.
strip_tool=${STRIP:-strip}
objcopy_tool=${OBJCOPY:-objcopy}
if command -v "$strip_tool" >/dev/null 2>&1 && command -v "$objcopy_tool" >/dev/null 2>&1; then
  so=$prefix/lib/liblatsol.so.$version
  install -d "$prefix/lib/.debug"
  "$objcopy_tool" --only-keep-debug "$so" "$prefix/lib/.debug/liblatsol.so.$version.debug"
  chmod 644 "$prefix/lib/.debug/liblatsol.so.$version.debug"
  "$strip_tool" --strip-debug --strip-unneeded "$so"
  (cd "$prefix/lib" && "$objcopy_tool" --add-gnu-debuglink=".debug/liblatsol.so.$version.debug" \
    "liblatsol.so.$version")
  "$strip_tool" --strip-debug "$prefix/lib/liblatsol.a" "$prefix/lib/libquda.a"
  "$objcopy_tool" --only-keep-debug "$prefix/lib/libquda.so" "$prefix/lib/.debug/libquda.so.debug"
  chmod 644 "$prefix/lib/.debug/libquda.so.debug"
  "$strip_tool" --strip-debug --strip-unneeded "$prefix/lib/libquda.so"
  (cd "$prefix/lib" && "$objcopy_tool" --add-gnu-debuglink=".debug/libquda.so.debug" libquda.so)
  "$strip_tool" --strip-debug "$prefix/bin/latsol-solve" "$prefix/bin/latsol-heatbath"
else
  echo "install.sh: no $strip_tool/$objcopy_tool; the libraries keep their debug information"
fi
install -m 644 bindings/fortran/latsol.f90 "$prefix/share/latsol/fortran/latsol.f90"

# The MPI lines of the pkg-config files.
mpi_requires=""
[ -n "$mpi_pc_module" ] && mpi_requires="Requires.private: $mpi_pc_module"

# Fills a template's @NAME@ fields.
subst() {
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" \
    -e "s|@MPI@|$mpi|g" -e "s|@MPI_FLAVOUR@|$mpi_flavour|g" -e "s|@MPI_REQUIRES@|$mpi_requires|g" \
    -e "s|@SIZEOF_VOID_P@|$(getconf LONG_BIT | awk '{print $1 / 8}')|g" \
    -e "s|@FC_VERSION@|${fc_version:-}|g" "$1" >"$2"
  chmod 644 "$2"
}
subst packaging/latsol.pc.in "$prefix/lib/pkgconfig/latsol.pc"
subst packaging/LatsolConfig.cmake.in "$prefix/lib/cmake/Latsol/LatsolConfig.cmake"
subst packaging/LatsolConfigVersion.cmake.in "$prefix/lib/cmake/Latsol/LatsolConfigVersion.cmake"
subst packaging/quda.pc.in "$prefix/lib/pkgconfig/quda.pc"
subst packaging/QUDAConfig.cmake.in "$prefix/lib/cmake/QUDA/QUDAConfig.cmake"
subst packaging/QUDAConfigVersion.cmake.in "$prefix/lib/cmake/QUDA/QUDAConfigVersion.cmake"

fc=${FC-gfortran}
if [ -n "$fc" ] && command -v "$fc" >/dev/null 2>&1; then
  fc_version=$("$fc" --version | head -n1)
  moddir=$prefix/include/latsol/fortran
  build=$(mktemp -d)
  trap 'rm -rf "$build"' EXIT
  install -d "$moddir"
  # -fPIC: the archive may be linked into a shared library of the host code.
  "$fc" -O2 -fPIC -J "$build" -c bindings/fortran/latsol.f90 -o "$build/latsol.o"
  ar rcs "$build/liblatsol_fortran.a" "$build/latsol.o"
  install -m 644 "$build/latsol.mod" "$moddir/latsol.mod"
  install -m 644 "$build/liblatsol_fortran.a" "$prefix/lib/liblatsol_fortran.a"
  subst packaging/latsol-fortran.pc.in "$prefix/lib/pkgconfig/latsol-fortran.pc"
else
  echo "install.sh: no Fortran compiler (FC=${fc:-}); installed the module's source only"
fi

echo "latsol $version installed in $prefix (MPI: $mpi_flavour)"
echo "  CMake:      -DCMAKE_PREFIX_PATH=$prefix, then find_package(Latsol ${version%.*}) ..."
echo "  pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs latsol"
echo "  QUDA's interface: QUDA_HOME=$prefix (-I\$QUDA_HOME/include -L\$QUDA_HOME/lib -lquda), quda.pc, find_package(QUDA)"
