"""Hot and cold replay in a running job (`replay/02_cold`): the cold tier fills and is sampled, the `disk_full` drill
reaches it (writes fail and are counted, the hot ring stays whole, the cold tier takes writes again afterwards), a
stopped job resumes with both tiers, and bad settings are refused before a run directory exists."""
import time

import pytest

from ddrl_lab import Job
from ddrl_lab.config.schema import ConfigError

# CartPole DQN on two replay shards, in-process: a ring of 2,000 transitions over a cold tier of 8,000
COLD = {"run.runtime": "serial", "replay.capacity": 2000, "replay.cold_capacity": 8000, "algo.learning_starts": 500,
        "algo.updates_per_segment": 4, "run.target_return": None, "run.log_interval_s": 0}


def test_the_cold_tier_fills_is_sampled_and_survives_the_disk_full_drill(tmp_path):
    job = Job("cartpole-dqn", {**COLD, "run.total_env_steps": 20_000, "run.faults": ["5000:disk_full:0:0.5"],
                               "run.out": str(tmp_path)}).start().wait()
    assert job.status == "finished", job.meta.get("error")
    df = job.metrics()
    failed = df.cold_write_failures
    assert failed.iloc[0] == 0 and failed.iloc[-1] > 0, "the drill never reached the cold tier"
    during = df[(failed > 0) & (failed < failed.iloc[-1])]
    # while writes failed, the hot ring stayed full and the cold tier did not grow
    assert (df.replay_size[df.env_steps > 2500] == 2000).all()
    assert during.replay_cold_size.nunique() <= 1, during[["env_steps", "replay_cold_size", "cold_write_failures"]]
    after = df[df.env_steps > df[failed == failed.iloc[-1]].env_steps.iloc[0]]
    assert after.replay_cold_size.iloc[-1] > during.replay_cold_size.max(), "the cold tier never took writes again"
    shards = job.meta["replay_shards"]
    assert all(s["cold_sampled"] > 0 for s in shards), shards
    # what the cold tier failed to write is lost, and counted as lost (the doctor's data stage names it)
    assert df.replay_lost_transitions.iloc[-1] == failed.iloc[-1] == job.books["replay_lost_transitions"]
    from ddrl_lab.analysis.doctor import diagnose_run
    data = next(s for s in diagnose_run(job.run_dir).stages if s.name == "data")
    (check,) = [c for c in data.checks if c.name == "replay losses"]
    assert not check.ok and f"{failed.iloc[-1]} in failed cold-tier writes" in check.figures, check
    # every transition is in one tier or was lost to the drill: sunk = cold adds + failed writes
    sunk = sum(s["added"] - s["replay_size"] for s in shards)
    assert sunk == sum(s["cold_added"] + s["cold_write_failures"] for s in shards), shards


def test_a_stopped_job_resumes_with_both_tiers(tmp_path):
    job = Job("cartpole-dqn", {**COLD, "run.total_env_steps": 16_000, "run.out": str(tmp_path)}).start()
    deadline = time.monotonic() + 300
    while job.status == "running" and time.monotonic() < deadline:
        df = job.metrics()
        if len(df) and df.replay_cold_size.iloc[-1] >= 3000:
            break
        time.sleep(0.1)
    job.stop()
    held = [(s["replay_size"], s["replay_cold_size"]) for s in job.meta["replay_shards"]]
    again = Job.resume(job.run_dir).start().wait()
    assert again.status == "finished", again.meta.get("error")
    restored = [(s["restored_items"], s["cold_restored_items"]) for s in again.meta["replay_shards"]]
    assert restored == held, (restored, held)
    assert again.metrics().replay_cold_size.iloc[-1] > sum(c for _, c in held)


@pytest.mark.parametrize("overrides, named", [
    ({"replay.cold_dir": "BLOCKED/below"}, "replay.cold_dir"),
    ({"algo.name": "ppo", "replay.kind": "none", "replay.cold_capacity": 100}, "replay.cold_capacity = 100"),
])
def test_bad_cold_settings_are_refused_before_a_run_directory_exists(tmp_path, overrides, named):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    overrides = {k: str(v).replace("BLOCKED", str(blocked)) if k == "replay.cold_dir" else v
                 for k, v in overrides.items()}
    out = tmp_path / "runs"
    with pytest.raises(ConfigError, match=named):
        Job("cartpole-dqn", {**COLD, **overrides, "run.out": str(out)}).start()
    assert not out.exists() or not any(out.iterdir())
