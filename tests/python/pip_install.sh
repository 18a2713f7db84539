#!/bin/sh
# Proves `pip install ./python` makes a working package in a virtual environment: Debian's
# python3-venv with --system-site-packages (for NumPy and pytest), installed with --no-index
# --no-build-isolation (nothing downloaded), then run from outside the source tree, where only
# the installed package (with its own libgpuport and plugins) can be imported.
# Usage: pip_install.sh BUILD_DIR SOURCE_DIR [PYTHON]
set -eu
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) python=${3:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv --system-site-packages "$tmp/venv"
cp -r "$src/python" "$src/include" "$tmp/"  # pip builds in place: keep the source tree clean
GPUPORT_BUILD_DIR="$build" "$tmp/venv/bin/python" -m pip install -q --no-index --no-build-isolation "$tmp/python"
cd "$tmp"
unset PYTHONPATH GPUPORT_LIBRARY
where=$("$tmp/venv/bin/python" -c "import gpuport, os; print(os.path.dirname(gpuport.__file__))")
case "$where" in "$tmp/venv/"*) ;; *) echo "imported gpuport from $where, not the venv" >&2; exit 1 ;; esac
ls "$where/_lib/libgpuport.so.0" "$where/_lib/libgpuport-opencl.so" >/dev/null
! ls "$where/_lib" | grep -e -test- -e -anchor  # the build tree's own test libraries stay behind
"$tmp/venv/bin/python" -c "import gpuport as gp; print(gp.version(), gp.devices())"
# gpuport.mpi travels too where the build has it: the heat lesson's scale-out over two ranks
if [ -e "$build/lib/libgpuport-mpi.so.0" ] && "$tmp/venv/bin/python" -c "import mpi4py" 2>/dev/null; then
    ls "$where/_lib/libgpuport-mpi.so.0" >/dev/null
    mpiexec -n 2 "$tmp/venv/bin/python" "$src/examples/heat_diffusion_mpi.py" --n 64 --check-every 10 --check
fi
cp "$src/docs/lesson/lesson.py" "$src/docs/lesson/run.py" "$tmp/"
"$tmp/venv/bin/python" "$tmp/run.py" --as gpuport --quick
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider "$src/tests/python/test_kernels.py" "$src/tests/python/test_cache.py"
