"""tests/python/run_notebook.py itself: cells run as Jupyter runs them (printed text, the last
expression, figures, the first error stops the run), and --check refuses stored outputs whose
code cells changed."""
import copy
import glob
import json
import os

import pytest

import run_notebook

NOTEBOOKS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "notebooks", "*.ipynb")))


def cells(*sources):
    return {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                       "source": s.splitlines(True)} for s in sources], "metadata": {}}


def test_cells_run_in_order_in_one_namespace(tmp_path):
    pytest.importorskip("matplotlib")
    nb = cells("x = 6\nprint('six', x)", "x * 7", "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()",
               "1 / 0", "print('never')")
    why = run_notebook.execute(str(tmp_path / "t.ipynb"), nb)
    out = [c["outputs"] for c in nb["cells"]]
    assert out[0] == [{"output_type": "stream", "name": "stdout", "text": ["six 6\n"]}]
    assert out[1][0]["output_type"] == "execute_result" and out[1][0]["data"]["text/plain"] == "42"
    assert out[2][-1]["output_type"] == "display_data" and out[2][-1]["data"]["image/png"]
    assert out[3][0]["ename"] == "ZeroDivisionError" and "cell 4" in why
    assert nb["cells"][4]["execution_count"] is None and out[4] == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_stored_notebooks_came_from_their_code(path, tmp_path):
    with open(path) as f:
        nb = json.load(f)
    assert run_notebook.check(path, nb) is None
    changed = copy.deepcopy(nb)
    code = next(c for c in changed["cells"] if c["cell_type"] == "code")
    code["source"] = code["source"] + ["\n", "x = 1\n"]
    assert "code cells changed" in run_notebook.check(path, changed)
    del changed["metadata"]["gpuport"]
    assert "no stored run" in run_notebook.check(path, changed)
