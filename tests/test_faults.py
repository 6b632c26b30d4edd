"""Fault drills on a real Ray cluster: a worker killed mid-run is restarted by Ray and the run goes on."""
import time

import numpy as np
import pytest
import torch

from ddrl_lab import Job
from ddrl_lab.runlog.metrics import read_metrics


@pytest.mark.slow
def test_killed_worker_restarts_and_throughput_recovers(tmp_path, ray_cluster):
    job = Job("cartpole-ppo", {"run.total_env_steps": 300_000, "run.log_interval_s": 0.5, "run.out": str(tmp_path)}).start()
    deadline = time.monotonic() + 90
    while len(job.metrics()) < 6 and time.monotonic() < deadline: time.sleep(0.2)
    before = float(np.median(job.metrics().env_steps_per_s.iloc[-3:]))
    killed_at = job.metrics().time_s.iloc[-1]
    job.inject("kill_worker", worker=0)
    job.wait()
    df = job.metrics()
    assert job.status == "finished" and df.episode_return_mean.iloc[-1] >= 475, df.episode_return_mean.max()
    assert df.worker_restarts.iloc[-1] == 1
    back = df[(df.time_s > killed_at) & (df.worker_restarts == 1)]
    recovered = back[back.env_steps_per_s >= 0.8 * before]
    assert len(recovered), (before, back[["time_s", "env_steps_per_s"]].head())
    print(f"steps/s before {before:.0f}; back to {recovered.env_steps_per_s.iloc[0]:.0f} "
          f"{recovered.time_s.iloc[0] - killed_at:.1f} s after the kill")
    assert recovered.time_s.iloc[0] - killed_at <= 10.0
    b = job.books
    assert b["produced"] == b["trained"] + b["rejected"] + b["dropped_stale"] + b["dropped_stop"] + b["lost_with_learner"]
    assert b["worker_restarts"] == 1 and b["lost_in_flight"] >= 1   # the segment in flight, and calls refused while it restarted


@pytest.mark.parametrize("fault,kw", [("kill_learner", {}), ("slow_worker", dict(worker=1, seconds=0.02)),
                                      ("delay", dict(seconds=0.02)), ("disk_full", dict(seconds=3.0))])
def test_drill_during_a_ray_run(fault, kw, tmp_path, ray_cluster):
    """Each drill mid-run fires (a restored learner, the seconds a delay drill slept in the rows, failed writes) and the
    run still solves CartPole, nothing written is lost, the books balance."""
    job = Job("cartpole-ppo", {"run.total_env_steps": 300_000, "run.checkpoint_every": 10, "run.log_interval_s": 0.2,
                               "run.out": str(tmp_path)}).start()
    deadline = time.monotonic() + 90
    while (not len(job.metrics()) or job.metrics().learner_updates.iloc[-1] < 25) and time.monotonic() < deadline:
        time.sleep(0.1)
    job.inject(fault, **kw)
    job.wait()
    df, b = job.metrics(), job.books
    assert job.status == "finished" and df.episode_return_mean.iloc[-1] >= 475, (fault, df.episode_return_mean.max())
    assert b["produced"] == b["trained"] + b["rejected"] + b["dropped_stale"] + b["dropped_stop"] + b["lost_with_learner"], dict(b)
    assert df.policy_version.is_monotonic_increasing
    assert len(read_metrics(job.run_dir / "metrics.jsonl")) == len(df)          # every row reached the disk
    ckpts = sorted((job.run_dir / "checkpoints").glob("*"))
    assert ckpts and all(p.suffix == ".pt" for p in ckpts)                     # whole files only, never a .tmp
    torch.load(ckpts[-1], weights_only=True)
    if fault == "kill_learner":
        assert b["learner_restarts"] == 1
        restored, = job.meta["learner_restores"]            # it came back from a checkpoint of this run
        assert restored.startswith("learner-v") and (job.run_dir / "checkpoints" / restored).exists()
    if fault == "disk_full":
        assert b["checkpoint_failures"] + job.log.write_failures >= 1
    if fault in ("slow_worker", "delay"):           # the drill fired: the seconds it slept are in the rows
        slept = df.drill_delay_s.iloc[-1]
        # at most one sleep per segment worker 1 made (slow_worker) or per learner update (delay), and at least one
        sleeps = job.produced_by_worker[1] if fault == "slow_worker" else df.learner_updates.iloc[-1]
        assert kw["seconds"] <= slept <= kw["seconds"] * sleeps + 1e-6, (fault, slept, sleeps)


@pytest.mark.slow
def test_central_inference_survives_a_killed_worker_and_a_killed_learner(tmp_path, ray_cluster):
    """SEED-style: a dead env worker is asked for its observations again once Ray restarted it (its unfinished
    trajectory is dropped and counted), and a dead learner comes back from its checkpoint; the run still solves."""
    job = Job("cartpole-central", {"run.checkpoint_every": 5, "run.log_interval_s": 0.1, "run.out": str(tmp_path)}).start()
    deadline = time.monotonic() + 90
    while (not len(job.metrics()) or job.metrics().learner_updates.iloc[-1] < 8) and time.monotonic() < deadline:
        time.sleep(0.05)
    job.inject("kill_worker", worker=1)
    # the learner counts what the restarted worker lost; the driver has it with the learner's next results
    while (job.books["worker_restarts"] < 1 or job.books["lost_transitions"] < 1) and job.status == "running" \
            and time.monotonic() < deadline + 60:
        time.sleep(0.05)
    job.inject("kill_learner")
    job.wait()
    df, b = job.metrics(), job.books
    assert job.status == "finished" and df.episode_return_mean.iloc[-1] >= 475, (job.status, df.episode_return_mean.max(), dict(b))
    assert b["worker_restarts"] == 1 and b["learner_restarts"] == 1, dict(b)
    assert b["lost_transitions"] > 0 and df.lost_transitions.iloc[-1] == b["lost_transitions"]   # the dead worker's unfinished steps
    assert df.policy_version.is_monotonic_increasing


@pytest.mark.slow
def test_a_node_dies_and_the_job_finishes_on_the_head_node(tmp_path):
    "ray.cluster_utils.Cluster: two nodes on this machine, in a subprocess with its own cluster."
    import json
    import subprocess
    import sys
    from conftest import ROOT
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "drills" / "two_node.py"), str(tmp_path)],
                       capture_output=True, text=True, timeout=400)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["nodes_before"] == 2, res                 # the env workers really were on both nodes
    assert res["status"] == "finished" and res["ret"] >= 475, res
    assert res["restarts"] >= 1, res                     # the worker of the lost node came back on the head
    b = res["books"]
    assert b["produced"] == b["trained"] + b.get("rejected", 0) + b.get("dropped_stale", 0) + b.get("dropped_stop", 0) + b.get("lost_with_learner", 0)

@pytest.mark.slow
def test_a_replay_shard_dies_and_comes_back_from_its_snapshot(tmp_path, ray_cluster):
    "DQN through 2 Ray replay shards: one is killed mid-run, restores its last snapshot, the loss is counted, the run solves."
    job = Job("cartpole-dqn", {"run.checkpoint_every": 5, "run.log_interval_s": 0.2, "run.out": str(tmp_path)}).start()
    deadline = time.monotonic() + 120
    while (not len(job.metrics()) or job.metrics().learner_updates.iloc[-1] < 12) and time.monotonic() < deadline:
        time.sleep(0.1)
    job.inject("kill_replay_shard", worker=1)
    job.wait()
    df, b = job.metrics(), job.books
    assert job.status == "finished" and df.episode_return_mean.iloc[-1] >= 475, df.episode_return_mean.max()
    assert b["replay_shard_restarts"] == 1
    shard = job.meta["replay_shards"][1]
    assert shard["restored_from"] is not None and shard["restored_items"] > 0      # it came back from a snapshot, not empty
    # what was sent to the shard but is not in its books was lost with it, and is counted
    assert b["replay_lost_transitions"] == job.replay_added[1] - shard["added"] >= 0
    assert b["produced"] == b["in_replay"] + b["rejected"] + b["dropped_stop"]
    # what tests/test_learning.py asks of a DQN run on Ray (this is its run): 2 workers, the budget, replay figures
    assert job.config.topology.num_workers == 2 and df.env_steps.iloc[-1] <= 100_000 + 2 * 8 * 32
    assert df.replay_size.iloc[-1] > 0 and df.replay_age_mean.notna().any()
