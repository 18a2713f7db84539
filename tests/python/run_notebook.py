"""Runs a notebook headless with nbclient, as the test suite does (GPUPORT_NOTEBOOK_QUICK=1 makes
its sizes small): exit 0 when every cell ran, 1 with the failing cell's error."""
import sys

import nbclient
import nbformat


def main():
    path = sys.argv[1]
    nb = nbformat.read(path, as_version=4)
    try:
        nbclient.NotebookClient(nb, timeout=1800, kernel_name="python3").execute()
    except nbclient.exceptions.CellExecutionError as e:
        print("%s: %s" % (path, e), file=sys.stderr)
        return 1
    for cell in nb.cells:  # the tables, for the log
        for out in cell.get("outputs", []):
            if out.get("name") == "stdout":
                print(out["text"], end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
