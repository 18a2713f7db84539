"""Python goes through the C library's kernel cache checks: a cache folder anyone can write is not
used (kernels stay in memory), cache_info() says why, and GPUPORT_DEBUG says it once a process."""
import os
import subprocess
import sys

import pytest

import gpuport as gp

SCRIPT = """
import gpuport as gp
src = "GP_KERNEL void k%d(GP_GLOBAL float *x, uint n) { uint i = gp_global_id(0); if (i < n) x[i] += %d.0f; }"
for i in range(2):
    p = gp.Program(src % (i, i))
    p.kernel("k%d" % i)
info = gp.cache_info()
print(info["on_disk"], info["folder"])
print(info["reason"])
"""


@pytest.mark.skipif(not gp.devices(), reason="no gpuport device")
def test_world_writable_cache_folder_is_refused_and_said_once(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o777)
    env = dict(os.environ, GPUPORT_CACHE_DIR=str(folder), GPUPORT_DEBUG="compile")
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    on_disk, reason = r.stdout.splitlines()[:2]
    assert on_disk == "False " + str(folder)
    assert str(folder) in reason and "mode 0777" in reason
    said = [line for line in r.stderr.splitlines() if "mode 0777" in line]
    assert len(said) == 1, r.stderr
    assert os.listdir(folder) == []


def test_private_cache_folder_is_used(tmp_path):
    env = dict(os.environ, GPUPORT_CACHE_DIR=str(tmp_path / "mine"))
    code = "import gpuport as gp; i = gp.cache_info(); print(i['on_disk'], i['writable'], repr(i['reason']))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "''"]
    assert oct(os.stat(tmp_path / "mine").st_mode & 0o777) == "0o700"
