"""Runs the course notebooks headless, stores a reference run's outputs in them, and checks that
stored outputs came from the code cells stored beside them. No Jupyter is needed: the cells run
in order in one namespace (the notebook's folder as the working directory), their printed text,
last expressions, errors and matplotlib figures (plt.show) kept as Jupyter keeps them.

  run_notebook.py NB...           run each (GPUPORT_NOTEBOOK_QUICK=1 for small sizes); exit 1 at the
                                  first cell that fails, with its traceback
  run_notebook.py --store NB...   run each and write its outputs into it, with a first cell naming
                                  the date, the versions and the devices of the run
  run_notebook.py --check NB...   run nothing: exit 1 when a notebook's code cells are not the ones
                                  that produced its stored outputs, or it has none
"""
import ast
import base64
import contextlib
import datetime
import hashlib
import io
import json
import linecache
import os
import platform
import sys
import traceback

REFERENCE_TAG = "reference-run"


def code_digest(path, nb):
    """sha256 over the code cells' sources, in order, and the Python modules beside the notebook
    (course.py): what the stored outputs came from."""
    h = hashlib.sha256()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            h.update("".join(cell["source"]).encode() + b"\0")
    folder = os.path.dirname(os.path.abspath(path))
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".py")):
        with open(os.path.join(folder, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()


def _figures(outputs):
    """plt.show(): every open figure becomes a PNG output of the running cell, then is closed."""
    import matplotlib.pyplot as plt
    for num in plt.get_fignums():
        buf = io.BytesIO()
        plt.figure(num).savefig(buf, format="png", dpi=80, bbox_inches="tight")
        outputs.append({"output_type": "display_data", "metadata": {},
                        "data": {"image/png": base64.b64encode(buf.getvalue()).decode(), "text/plain": "<Figure>"}})
    plt.close("all")


def _run_cell(source, namespace, count, outputs):
    """Runs one cell as Jupyter does: the last expression's value is shown. False on an error."""
    text = io.StringIO()
    try:
        name = "<cell %d>" % count
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)  # for inspect, as IPython does
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
            exec(compile(tree, "<cell %d>" % count, "exec"), namespace)
            value = eval(compile(ast.Expression(last.value), "<cell %d>" % count, "eval"), namespace) if last else None
        ok = True
    except Exception as e:  # the cell's error, shown as Jupyter shows it
        ok, value = False, None
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        outputs.append({"output_type": "error", "ename": type(e).__name__, "evalue": str(e), "traceback": tb})
    if text.getvalue():
        outputs.insert(0, {"output_type": "stream", "name": "stdout", "text": text.getvalue().splitlines(True)})
    if value is not None:
        outputs.append({"output_type": "execute_result", "execution_count": count, "metadata": {},
                        "data": {"text/plain": repr(value)}})
    return ok


def execute(path, nb):
    """Runs the notebook's code cells in order, filling their outputs. Returns the failing cell's
    error text, or None."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    namespace = {"__name__": "__main__"}
    cwd, count, folder = os.getcwd(), 0, os.path.dirname(os.path.abspath(path))
    os.chdir(folder)
    sys.path.insert(0, folder)  # as Jupyter's kernel imports modules beside the notebook
    show = plt.show
    try:
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            count += 1
            outputs = []
            plt.show = lambda *a, **k: _figures(outputs)
            ok = _run_cell("".join(cell["source"]), namespace, count, outputs)
            _figures(outputs)  # figures left open at the cell's end are shown too
            cell["outputs"], cell["execution_count"] = outputs, count
            if not ok:
                return "cell %d:\n%s" % (count, "".join(outputs[-1]["traceback"]))
    finally:
        plt.show = show
        os.chdir(cwd)
        sys.path.remove(folder)
    return None


def reference_cell(nb):
    """The first cell: when, where and with what the stored outputs were produced."""
    import numpy
    import gpuport as gp
    versions = ["gpuport %s" % gp.version(), "Python %s" % platform.python_version(), "NumPy %s" % numpy.__version__]
    try:
        import cupy
        versions.append("CuPy %s" % cupy.__version__)
    except ImportError:
        pass
    cpu = "a CPU"
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
    lines = ["*Stored outputs: a run of %s on a host with %s (%d cores), with %s. Devices:*\n" %
             (datetime.date.today().isoformat(), cpu, os.cpu_count() or 1, ", ".join(versions)), "\n"]
    for d in gp.devices():
        lines.append("- `%s` %s (%s, driver %s)\n" % (d.spec, d.name, d.type, d.info["driver_version"]))
    lines.append("\n*Run it again (`tests/python/run_notebook.py --store`) and the tables show your machine.*")
    return {"cell_type": "markdown", "metadata": {"tags": [REFERENCE_TAG]}, "source": lines}


def check(path, nb):
    """The stored outputs' provenance: None when they came from these code cells, else why not."""
    stored = nb.get("metadata", {}).get("gpuport", {}).get("code_sha256")
    if not stored:
        return "it has no stored run (run_notebook.py --store on the reference machine)"
    if stored != code_digest(path, nb):
        return ("its code cells changed after its stored run: run it again with run_notebook.py --store "
                "on the reference machine, or undo the change")
    if any(c["cell_type"] == "code" and c.get("execution_count") is None for c in nb["cells"]):
        return "a code cell has no stored output"
    if REFERENCE_TAG not in nb["cells"][0].get("metadata", {}).get("tags", []):
        return "its first cell does not name the stored run"
    return None


def main(argv):
    mode = argv[0] if argv and argv[0] in ("--store", "--check") else None
    paths = argv[1:] if mode else argv
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    failed = 0
    for path in paths:
        with open(path) as f:
            nb = json.load(f)
        if mode == "--check":
            why = check(path, nb)
        else:
            if nb["cells"] and REFERENCE_TAG in nb["cells"][0].get("metadata", {}).get("tags", []):
                nb["cells"].pop(0)
            why = execute(path, nb)
            for cell in nb["cells"]:  # the tables, for the log
                for out in cell.get("outputs", []):
                    if out.get("name") == "stdout":
                        print("".join(out["text"]), end="")
            if mode == "--store" and not why:
                nb["cells"].insert(0, reference_cell(nb))
                nb.setdefault("metadata", {})["gpuport"] = {"code_sha256": code_digest(path, nb)}
                with open(path, "w") as f:
                    json.dump(nb, f, indent=1)
                    f.write("\n")
        if why:
            print("%s: %s" % (path, why), file=sys.stderr)
            failed = 1
        else:
            print("%s: ok" % path)
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
