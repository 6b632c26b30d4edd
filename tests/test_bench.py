"""The benchmarks stay runnable: a very short run prints every row of the table (speed is not asserted here)."""
import json
import subprocess
import sys

import pytest

from conftest import BIN, ROOT


def test_env_bench_prints_its_table():
    r = subprocess.run([sys.executable, "bench/envs.py", "--seconds", "0.2"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    for row in ("plain 1-env loop", "InlinePool CartPole x8", "ProcessPool", "torch CartPole-v1 x4096",
                "torch Breakout-MinAtar-v0 x4096", "raw ALEInterface", "InlinePool Pong x4"):
        assert row in r.stdout, (row, r.stdout)


@pytest.mark.slow
def test_bench_cli_writes_medians_ratios_and_the_machine(tmp_path):
    "`ddrl-lab bench codecs ray --quick --repeats 3`: a JSON file with the machine, medians within [min, max], and ratios."
    out = tmp_path / "results.json"
    r = subprocess.run([str(BIN / "ddrl-lab"), "bench", "codecs", "ray", "--quick", "--repeats", "3", "--out", str(out)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(out.read_text())
    m = res["machine"]
    assert m["cores"] >= 1 and m["cpu_model"] and "git_revision" in m
    assert all(m["versions"][k] for k in ("torch", "ray", "gymnasium", "ale-py"))
    assert res["repeats"] == 3 and list(res["benchmarks"]) == ["codecs", "ray"]
    for name, b in res["benchmarks"].items():
        assert b["error"] is None and b["figures"] and b["ratios"], name
        for fig, f in b["figures"].items():
            assert len(f["values"]) == 3 and f["n"] == 3, (name, fig, f)
            assert f["min"] <= f["median"] <= f["max"], (name, fig, f)
        for ratio, q in b["ratios"].items():
            assert len(q["values"]) == 3 and q["min"] <= q["median"] <= q["max"], (name, ratio, q)
            num, den = b["figures"][q["num"]]["values"], b["figures"][q["den"]]["values"]
            assert q["values"] == pytest.approx([x / y for x, y in zip(num, den)]), (name, ratio)   # pair by pair
    assert "ratio: actor round trip / pipe round trip" in r.stdout and "ratio: Pong shm / pickle5, through a pipe" in r.stdout
