"""Builds the gpuport package for pip: _api.py generated from include/gpuport.h (gen_api.py), and
the build tree's libgpuport.so.0, its plugins and (where the build has it) libgpuport-mpi.so.0
copied into gpuport/_lib, where _where.py points. GPUPORT_BUILD_DIR names the build tree
(default: build beside this folder's parent)."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "gpuport")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.check_call([sys.executable, os.path.join(HERE, "gen_api.py"),
                                   os.path.join(ROOT, "include", "gpuport.h"), os.path.join(pkg, "_api.py"),
                                   os.path.join(tmp, "layout.c")])
        build = os.environ.get("GPUPORT_BUILD_DIR", os.path.join(ROOT, "build"))
        lib = os.path.join(build, "lib")
        # the libraries by their sonames (what the loader and gpuport.mpi ask for), the plugins
        # by theirs; the build tree's anchors and test libraries stay behind
        libs = glob.glob(os.path.join(lib, "libgpuport.so.[0-9]")) + glob.glob(os.path.join(lib, "libgpuport-mpi.so.[0-9]")) + \
            [p for p in glob.glob(os.path.join(lib, "libgpuport-*.so"))
             if not any(part in os.path.basename(p) for part in ("-mpi", "-anchor", "-test-"))]
        if not any(os.path.basename(p).startswith("libgpuport.so.") for p in libs):
            raise SystemExit("gpuport: no libgpuport.so.* in %s/lib: build gpuport first (scripts/setup), or set "
                             "GPUPORT_BUILD_DIR to its build tree" % build)
        dest = os.path.join(pkg, "_lib")
        os.makedirs(dest, exist_ok=True)
        for p in libs:
            shutil.copy2(os.path.realpath(p), os.path.join(dest, os.path.basename(p)))
        with open(os.path.join(pkg, "_where.py"), "w") as f:
            f.write("LIBRARY_DIRS = ['_lib']\n")


setup(cmdclass={"build_py": BuildWithLibrary}, package_data={"gpuport": ["_lib/*"]})
