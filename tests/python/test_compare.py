"""gpuport-compare merges bench and test results of several machines into one table, one column
per device: checked on hand-made results whose every number is known."""
import csv
import json
import os
import subprocess
import sys
import xml.dom.minidom

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "gpuport-compare")


def bench(name, backend, ratio):
    return [{"device": backend + ":0", "device_name": name, "backend": backend, "kernel": k, "size": 1, "shape": s,
             "median_ms": 2.0, "min_ms": 1.5, "rate": rate, "unit": unit, "anchor": "anchor X", "anchor_median_ms": 1.0,
             "anchor_min_ms": 1.0, "anchor_rate": rate / ratio, "ratio": ratio, "vs_cuda": None, "check": "ok",
             "note": ""} for k, s, rate, unit in [("copy", "1024", 100.0, "GB/s"), ("sgemm", "N=512", 2.5, "TFLOP/s")]]


def test_merge(tmp_path):
    files = []
    for i, (name, backend, ratio) in enumerate([("GPU A", "cuda", 0.5), ("CPU B", "opencl", 1.25)]):
        p = tmp_path / ("m%d.json" % i)
        p.write_text(json.dumps(bench(name, backend, ratio)))
        files.append(str(p))
    t = tmp_path / "tests.json"
    t.write_text(json.dumps({"tool": "gpuport-test", "devices": [
        {"name": "GPU A", "backend": "cuda", "passed": 120, "failed": 1, "skipped": 3}]}))
    files.append(str(t))
    md, cs, svg = tmp_path / "t.md", tmp_path / "t.csv", tmp_path / "t.svg"
    subprocess.run([sys.executable, TOOL, *files, "--md", str(md), "--csv", str(cs), "--svg", str(svg)], check=True)
    lines = md.read_text().splitlines()
    assert lines[0] == "| kernel | size | GPU A (cuda) | CPU B (opencl) |"
    assert lines[2] == "| copy | 1024 | 100 GB/s (0.50x anchor X) | 100 GB/s (1.25x anchor X) |"
    assert lines[3] == "| sgemm | N=512 | 2.5 TFLOP/s (0.50x anchor X) | 2.5 TFLOP/s (1.25x anchor X) |"
    assert lines[4] == "| gpuport-test | passed / failed / skipped | 120 / 1 / 3 | - |"
    rows = list(csv.DictReader(open(cs)))
    assert [(r["device"], r["kernel"], float(r["ratio"] or 0)) for r in rows[:2]] == [
        ("GPU A (cuda)", "copy", 0.5), ("CPU B (opencl)", "copy", 1.25)]
    assert rows[-1]["kernel"] == "gpuport-test" and rows[-1]["failed"] == "1"
    assert len(xml.dom.minidom.parse(str(svg)).getElementsByTagName("rect")) == 4 + 2  # 2 kernels x 2 devices, a key each


def test_same_device_in_two_files_gets_two_columns(tmp_path):
    a, b = tmp_path / "monday.json", tmp_path / "tuesday.json"
    a.write_text(json.dumps(bench("GPU A", "cuda", 0.5)))
    b.write_text(json.dumps(bench("GPU A", "cuda", 0.75)))
    out = subprocess.run([sys.executable, TOOL, str(a), str(b)], check=True, capture_output=True, text=True).stdout
    assert out.splitlines()[0] == "| kernel | size | GPU A (cuda), monday | GPU A (cuda), tuesday |"


def test_refuses_other_json(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{}")
    r = subprocess.run([sys.executable, TOOL, str(p)], capture_output=True, text=True)
    assert r.returncode != 0 and "neither gpuport-bench" in r.stderr
