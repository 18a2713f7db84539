"""Builds every kernel that test_numba.py translates (as GPUPORT_DEBUG=compile prints them) for an
AMD target through hiprtc, so the HIP path of Python kernels is tested where no AMD GPU is.
Usage: numba_hip.py GPUPORT_HIPCC_CHECK; exit 77 where hiprtc is missing, as the tool does."""
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
env = dict(os.environ, GPUPORT_DEBUG="compile")
run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                      os.path.join(here, "test_numba.py")], env=env, capture_output=True, text=True)
if run.returncode:
    sys.exit("numba_hip: test_numba.py failed:\n" + run.stdout[-3000:])
sources = {}
for name, body in re.findall(r"^gpuport: kernel (\w+)\([^\n]*in the kernel dialect:\n(.*?)(?=^gpuport|\Z)", run.stderr,
                             flags=re.M | re.S):
    sources.setdefault(body, name)
if len(sources) < 20:
    sys.exit("numba_hip: only %d kernel sources came out of test_numba.py" % len(sources))
with tempfile.TemporaryDirectory() as tmp:
    files = []
    for i, (body, name) in enumerate(sources.items()):
        files.append(os.path.join(tmp, "%02d_%s.gp" % (i, name)))
        with open(files[-1], "w") as f:
            f.write(body)
    check = subprocess.run([sys.argv[1], "--target", "gfx90a"] + files, capture_output=True, text=True)
print(check.stdout + check.stderr)
if check.returncode == 0 and "warning" in check.stderr:
    sys.exit("numba_hip: hiprtc warned about a translated kernel")
sys.exit(check.returncode)
