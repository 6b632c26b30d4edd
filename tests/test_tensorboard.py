"""`run.tensorboard`: a real serial CartPole job writes its rows as TensorBoard scalars, read back with tensorboard's own reader."""
import subprocess
import sys
import threading

import pandas as pd
import pytest

from ddrl_lab.run.job import Job

SMALL = {"run.runtime": "serial", "run.total_env_steps": 4096, "run.target_return": None, "run.log_interval_s": 0.0}


def test_tensorboard_event_files_hold_the_rows(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    job = Job("cartpole-ppo", {**SMALL, "run.out": str(tmp_path), "run.tensorboard": True}, name="tb").start()
    job.wait()
    assert job.status == "finished" and job.tensorboard.closed
    assert not [t for t in threading.enumerate() if type(t).__name__ == "_AsyncWriterThread"]   # closed cleanly: its writer thread ended
    rows = pd.DataFrame(job.log.rows)
    files = list((job.run_dir / "tensorboard").glob("events.out.tfevents.*"))
    assert len(files) == 1, files
    acc = EventAccumulator(str(job.run_dir / "tensorboard"), size_guidance={"scalars": 0})   # 0: keep every event
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    numeric = {k for k in rows if pd.api.types.is_numeric_dtype(rows[k]) and not pd.api.types.is_bool_dtype(rows[k]) and rows[k].notna().any()}
    assert {"env_steps_per_s", "episode_return_mean", "env_steps", "learner_updates"} <= tags and numeric <= tags, numeric - tags
    rate = acc.Scalars("env_steps_per_s")
    assert [e.step for e in rate] == rows.env_steps.tolist()
    assert [e.value for e in rate] == pytest.approx(rows.env_steps_per_s.tolist(), rel=1e-6)      # (stored as float32)
    ret, has = acc.Scalars("episode_return_mean"), rows[rows.episode_return_mean.notna()]
    assert len(has) > 0 and [e.step for e in ret] == has.env_steps.tolist()
    assert [e.value for e in ret] == pytest.approx(has.episode_return_mean.tolist(), rel=1e-6)


def test_tensorboard_is_off_by_default(tmp_path):
    job = Job("cartpole-ppo", {**SMALL, "run.total_env_steps": 512, "run.out": str(tmp_path)}, name="plain").start()
    job.wait()
    assert job.status == "finished" and job.tensorboard is None
    assert not (job.run_dir / "tensorboard").exists()
    assert not list(job.run_dir.rglob("events.out.tfevents.*"))


def test_cli_refuses_tensorboard_without_the_package(tmp_path):
    "As if tensorboard were not installed (sys.modules['tensorboard'] = None makes its import fail): exit 2, no run directory."
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "from ddrl_lab.cli import main\n"
            f"sys.exit(main(['run', 'cartpole-ppo', '--set', 'run.tensorboard=true', '--set', 'run.runtime=serial', '--out', {str(tmp_path)!r}]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "run.tensorboard = true" in r.stderr and "pip install tensorboard" in r.stderr, r.stderr
    assert not list(tmp_path.iterdir())
