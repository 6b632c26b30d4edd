"`ddrl-lab doctor` on real run directories, and success criteria reaching the rows, Prometheus and the Dashboard."
import json
import subprocess
import time
import urllib.request

from ddrl_lab import Dashboard, Job
from ddrl_lab.run.prometheus import MetricsServer, parse_prometheus

from conftest import BIN


def _doctor(run_dir, child_env, *extra):
    return subprocess.run([BIN / "ddrl-lab", "doctor", str(run_dir), *extra], capture_output=True, text=True, env=child_env, timeout=120)


def test_doctor_cli_reads_a_run_directory_alone(tmp_path, child_env):
    "A poisoned serial run: the CLI blames the data (exit 1, text and JSON); a path that is no run directory exits 2."
    job = Job("cartpole-ppo", {"run.runtime": "serial", "run.total_env_steps": 6144, "run.target_return": None, "run.out": str(tmp_path),
                               "run.faults": ["1024:poison:1"]}).start().wait()
    assert job.status == "finished" and job.books["rejected"] > 0
    r = _doctor(job.run_dir, child_env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1. data: are the trajectories sound? -> look here" in r.stdout and "worker 1" in r.stdout
    assert "verdict: look at data first" in r.stdout and "rejections.jsonl" in r.stdout
    d = json.loads(_doctor(job.run_dir, child_env, "--json").stdout)
    assert (d["healthy"], d["blamed"]) == (False, "data") and [s["name"] for s in d["stages"]] == ["data", "versions", "communication", "algorithm"]
    assert job.diagnose().blamed.name == "data"                           # the same from the live object
    assert "Diagnosis (ddrl-lab doctor)" in (job.run_dir / "report.html").read_text()
    bad = _doctor(tmp_path / "no-such-run", child_env)
    assert bad.returncode == 2 and "does not exist" in bad.stderr and "Traceback" not in bad.stderr


def test_a_criterion_the_job_cannot_meet_shows_in_rows_prometheus_and_dashboard(tmp_path):
    "criteria.min_env_steps_per_s far above what CartPole runs at: the first row already counts the violation everywhere."
    job = Job("cartpole-ppo", {"run.runtime": "serial", "run.total_env_steps": 200_000, "run.target_return": None, "run.out": str(tmp_path),
                               "run.log_interval_s": 0.2, "criteria.min_env_steps_per_s": 1e9, "criteria.max_version_lag_p95": 0})
    with MetricsServer(job) as server:
        job.start()
        dash = Dashboard(job, refresh_s=0.1)
        try:
            t0 = time.monotonic()
            while len(job.metrics()) < 2 and time.monotonic() - t0 < 60: time.sleep(0.05)
            row = job.metrics().iloc[-1]
            assert row.violations_min_env_steps_per_s >= 1 and row.criteria_failing >= 1
            assert row.violations_max_version_lag_p95 == 0                  # sync: every lag is 0, that one holds
            samples = parse_prometheus(urllib.request.urlopen(server.url, timeout=10).read().decode())
            assert samples['ddrl_criterion_violations_total{criterion="min_env_steps_per_s"}'] >= 1
            assert samples['ddrl_criterion_violations_total{criterion="max_version_lag_p95"}'] == 0
            dash.refresh()
            assert "crimson" in dash.criteria.value and "env_steps_per_s" in dash.criteria.value
        finally:
            dash.close(); job.stop()
    assert "Success criteria" in (job.run_dir / "report.html").read_text()


def test_a_criterion_no_row_measures_is_unmeasured_not_met(tmp_path):
    """criteria.min_gpu_utilization on a run whose learner runs on the CPU (topology.device auto, no CUDA here): no row
    has gpu_utilization, so the criterion breaks no row, and the run says it was never judged: a warning in meta.json
    and run.log, and a failing doctor check that says "unmeasured" (before, the doctor passed it: a missing figure
    broke nothing)."""
    import pytest, torch
    if torch.cuda.is_available(): pytest.skip("a CUDA learner measures gpu_utilization")
    job = Job("cartpole-ppo", {"run.runtime": "serial", "run.total_env_steps": 2048, "run.target_return": None,
                               "run.out": str(tmp_path), "criteria.min_gpu_utilization": 50}).start().wait()
    df = job.metrics()
    assert job.status == "finished" and "gpu_utilization" not in df.columns and (df.violations_min_gpu_utilization == 0).all()
    said = [w for w in job.meta.get("warnings", []) if "criteria.min_gpu_utilization" in w]
    assert len(said) == 1 and "unmeasured" in said[0] and "nvidia-ml-py" in said[0], job.meta.get("warnings")
    assert "unmeasured" in (job.run_dir / "run.log").read_text()
    check, = [c for s in job.diagnose().stages for c in s.checks if c.name == "criteria.min_gpu_utilization"]
    assert not check.ok and "unmeasured" in check.figures, check
