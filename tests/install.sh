#!/bin/sh
# Proves an installation works where gpuport was not built: the tools start (their RUNPATH is
# relative), the plugins are found, programs build against it with pkg-config and with
# find_package and run, the Python package loads the installed library.
#   tests/install.sh BUILD_DIR SOURCE_DIR          cmake --install into a prefix, then moved
#   tests/install.sh BUILD_DIR SOURCE_DIR --deb    the Debian packages of cpack, unpacked into a
#                                                  root of their own, and gpuport-test run there
set -eu
build=$1
src=$2
mode=${3:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuport-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

if [ "$mode" = --deb ]; then
    (cd "$build" && cpack -G DEB -B "$tmp/debs" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack failed"; }
    # One package per part, vendor plugins apart, after Debian's library policy.
    for p in libgpuport0 libgpuport-dev gpuport-tools; do
        ls "$tmp/debs/${p}_"*.deb >/dev/null 2>&1 || fail "no $p package"
    done
    deb() { ls "$tmp/debs/$1_"*.deb 2>/dev/null | head -1; }
    dpkg-deb -f "$(deb libgpuport0)" Depends | grep -q "ocl-icd-libopencl1" || fail "libgpuport0 does not depend on the ICD loader"
    dpkg-deb -c "$(deb libgpuport0)" | grep -q "/libgpuport.so.0 -> " || fail "libgpuport0 lacks the libgpuport.so.0 link"
    dpkg-deb -c "$(deb libgpuport0)" | grep -q "gpuport/libgpuport-opencl.so" || fail "libgpuport0 lacks the OpenCL plugin"
    ! dpkg-deb -c "$(deb libgpuport0)" | grep -q "libgpuport-cuda.so" || fail "the CUDA plugin is in libgpuport0"
    dpkg-deb -c "$(deb libgpuport-dev)" | grep -q "include/gpuport.h" || fail "libgpuport-dev lacks gpuport.h"
    # gpuport-bench's CUDA anchor (where nvcc built it) beside the plugins, not among the libraries.
    if [ -e "$build/lib/libgpuport-anchor-cuda.so" ]; then
        dpkg-deb -c "$(deb gpuport-tools)" | grep -q "/gpuport/libgpuport-anchor-cuda.so" ||
            fail "gpuport-tools lacks the CUDA anchor in lib/.../gpuport"
    fi
    if [ -n "$(deb libgpuport0-cuda)" ]; then
        dpkg-deb -f "$(deb libgpuport0-cuda)" Depends | grep -q "libgpuport0 (= " || fail "libgpuport0-cuda does not depend on libgpuport0"
    fi
    for f in "$tmp"/debs/*.deb; do dpkg -x "$f" "$tmp/root"; done
    prefix=$tmp/root/usr
    "$prefix/bin/gpuport-info" -l || fail "gpuport-info does not start from the unpacked packages"
    "$prefix/bin/gpuport-info" | grep -q "plugin $prefix/" || fail "the packages' plugins were not the ones loaded"
    # The conformance suite from the packages, on this machine's devices (77: none here).
    rc=0
    "$prefix/bin/gpuport-test" --group device --group map --json "$tmp/report.json" >"$tmp/test.log" 2>&1 || rc=$?
    [ $rc = 0 ] || [ $rc = 77 ] || { cat "$tmp/test.log"; fail "gpuport-test from the packages failed ($rc)"; }
    [ $rc = 77 ] || grep -q '"tool": "gpuport-test"' "$tmp/report.json" || fail "gpuport-test wrote no JSON report"
else
    cmake --install "$build" --prefix "$tmp/first" >/dev/null
    "$tmp/first/bin/gpuport-info" -l || fail "gpuport-info does not start from its --prefix install"
    mv "$tmp/first" "$tmp/moved"
    prefix=$tmp/moved
    "$prefix/bin/gpuport-info" -l || fail "gpuport-info does not start once the prefix is moved"
    "$prefix/bin/gpuport-info" | grep -q "plugin $prefix/" || fail "the moved prefix's plugins were not the ones loaded"
fi

pc=$(find "$prefix" -name gpuport.pc)
[ -n "$pc" ] || fail "no gpuport.pc installed"
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs gpuport)
case "$flags" in *"$prefix"*) ;; *) fail "pkg-config names another prefix: $flags" ;; esac
libdir=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir gpuport)
# shellcheck disable=SC2086 # the flags are words
cc -std=c11 -Wall -Werror "$src/tests/consumer/consumer.c" $flags -Wl,-rpath,"$libdir" -o "$tmp/with-pkgconfig"
"$tmp/with-pkgconfig" || fail "the pkg-config consumer failed"

cmake -S "$src/tests/consumer" -B "$tmp/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/cmake-consumer" >/dev/null
"$tmp/cmake-consumer/consumer" || fail "the find_package consumer failed"

# libgpuport-mpi, where it was built: both consumers on two ranks (the environment lets Open MPI
# run as root and oversubscribe; ctest sets it).
if [ -f "$prefix/include/gpuport_mpi.h" ]; then
    flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs gpuport-mpi)
    # shellcheck disable=SC2086 # the flags are words
    cc -std=c11 -Wall -Werror "$src/tests/consumer/consumer_mpi.c" $flags -Wl,-rpath,"$libdir" -o "$tmp/mpi-with-pkgconfig"
    mpiexec -n 2 "$tmp/mpi-with-pkgconfig" || fail "the pkg-config MPI consumer failed"
    [ -x "$tmp/cmake-consumer/consumer_mpi" ] || fail "find_package(gpuport COMPONENTS mpi) did not find libgpuport-mpi"
    mpiexec -n 2 "$tmp/cmake-consumer/consumer_mpi" || fail "the find_package MPI consumer failed"
fi
# The Python package, where it was built: python3 finds it under the moved prefix with no
# PYTHONPATH but the prefix's own folder, and it loads the prefix's library.
pkg=$(find "$prefix" -path '*dist-packages/gpuport/__init__.py' | head -1)
if [ -n "$pkg" ] && /usr/bin/python3 -c "import numpy" 2>/dev/null; then
    where=$(cd "$tmp" && PYTHONPATH=$(dirname "$(dirname "$pkg")") /usr/bin/python3 -c \
        "import gpuport, numpy; assert gpuport.sin(gpuport.asarray(numpy.zeros(3, numpy.float32))).sum() == 0; print(gpuport._ffi.lib._name)") \
        || fail "the installed Python package does not work"
    case "$where" in "$prefix"/*) ;; *) fail "the installed Python package loaded $where, not the prefix's library" ;; esac
fi
echo "install test${mode:+ $mode}: tools, plugins, pkg-config, find_package and Python work from the installation"
