#!/bin/sh
# Proves an installation in a prefix of its own works, and still works once moved: the tools
# start (their RUNPATH is relative), the plugins are found, and programs build against it with
# pkg-config and with find_package and run.
#   tests/install.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuport-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/first" >/dev/null
"$tmp/first/bin/gpuport-info" -l || fail "gpuport-info does not start from its --prefix install"
mv "$tmp/first" "$tmp/moved"
prefix=$tmp/moved
"$prefix/bin/gpuport-info" -l || fail "gpuport-info does not start once the prefix is moved"
"$prefix/bin/gpuport-info" | grep -q "plugin $prefix/" || fail "the moved prefix's plugins were not the ones loaded"

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
echo "install test: --prefix install and moved prefix work (tools, plugins, pkg-config, find_package, Python)"
