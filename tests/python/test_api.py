"""The package's declarations are gpuport.h's: every enum value and status, and every struct's
size and field offsets, as the C compiler sees them (gpuport-python-layout, generated with the
package from the header), equal what ctypes uses."""
import ctypes
import json
import os
import subprocess

import gpuport as gp
from gpuport import _ffi


def _c_view():
    exe = os.environ["GPUPORT_PYTHON_LAYOUT"]
    return json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)


def test_enums_and_statuses_match_the_header():
    c = _c_view()
    assert c["enums"], "the layout program printed no enum"
    for name, value in c["enums"].items():
        assert getattr(gp, name) == value, name
        assert _ffi.CONSTANTS[name] == value, name


def test_struct_layouts_match_the_header():
    c = _c_view()
    assert set(c["records"]) == set(_ffi.RECORDS)
    for name, rec in c["records"].items():
        cls = _ffi.RECORDS[name]
        assert ctypes.sizeof(cls) == rec["size"], name
        for field, offset in rec["offsets"].items():
            assert getattr(cls, field).offset == offset, "%s.%s" % (name, field)


def test_version():
    major, minor, patch = (int(p) for p in gp.version().split("."))
    assert (major, minor, patch) == (gp.GP_VERSION_MAJOR, gp.GP_VERSION_MINOR, gp.GP_VERSION_PATCH)
    assert gp.__version__ == gp.version()
