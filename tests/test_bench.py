"""The benchmarks stay runnable: a very short run prints every row of the table (speed is not asserted here)."""
import subprocess
import sys

from conftest import ROOT


def test_env_bench_prints_its_table():
    r = subprocess.run([sys.executable, "bench/envs.py", "--seconds", "0.2"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    for row in ("plain 1-env loop", "InlinePool CartPole x8", "ProcessPool", "torch CartPole-v1 x4096",
                "torch Breakout-MinAtar-v0 x4096", "raw ALEInterface", "InlinePool Pong x4"):
        assert row in r.stdout, (row, r.stdout)
