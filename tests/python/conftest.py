"""The Python suite runs every test on every device gpuport finds (GPUPORT_TEST_DEVICES, as for the
C suite, narrows them: "opencl:0,cuda:0")."""
import os

import pytest

import gpuport as gp


def _devices():
    wanted = [s.strip() for s in os.environ.get("GPUPORT_TEST_DEVICES", "").split(",") if s.strip()]
    return [d for d in gp.devices() if not wanted or d.spec in wanted]


DEVICES = _devices()


@pytest.fixture(params=DEVICES, ids=[d.spec for d in DEVICES])
def dev(request):
    return request.param


def pytest_collection_modifyitems(config, items):
    if not DEVICES:
        for item in items:
            if "dev" in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.skip(reason="no gpuport device"))
