"""The parameter plane on real Ray actors: all-reduce equals one learner on the combined batch, a
sync run repeats exactly, the async staleness window holds and its counters add up, soft sync
learns and keeps its books, and all three modes learn CartPole with 2 workers and 2 learners."""
import json
import time

import gymnasium as gym
import numpy as np
import pytest
import torch

from ddrl_lab import Job
from ddrl_lab.config.load import config_from_dict
from ddrl_lab.learners.algorithms import IMPALALearner
from ddrl_lab.runtime import RayRuntime
from ddrl_lab.data.segments import random_segment

SPACES = (gym.spaces.Box(-1, 1, (3,)), gym.spaces.Discrete(2))
MODES = {"sync-allreduce": {"sync.mode": "sync", "sync.aggregation": "allreduce"},
         "sync-ps": {"sync.mode": "sync", "sync.aggregation": "parameter-server"},
         "async-ps": {"sync.mode": "async", "sync.aggregation": "parameter-server", "sync.max_staleness": 4},
         "soft-ps": {"sync.mode": "soft", "sync.aggregation": "parameter-server", "sync.local_steps": 4},
         "sync-hybrid": {"sync.mode": "sync", "sync.aggregation": "hybrid"},
         "async-hybrid": {"sync.mode": "async", "sync.aggregation": "hybrid", "sync.max_staleness": 4}}


def test_allreduce_two_learners_equal_one_learner_on_the_combined_batch(ray_cluster):
    cfg = config_from_dict({"algo": {"name": "impala", "max_grad_norm": 1e9}, "topology": {"device": "cpu"}})
    seg_a, seg_b = random_segment(T=8, M=2, seed=1), random_segment(T=8, M=2, seed=2)
    one = IMPALALearner(cfg, *SPACES)
    one.update(seg_a, seg_b)
    rt = RayRuntime()
    learners = [rt.spawn(IMPALALearner, cfg, *SPACES, num_cpus=0.5) for _ in range(2)]
    addr = rt.get(rt.call(learners[0], "address"))
    rt.get([rt.call(lr, "join_group", addr, rank, 2) for rank, lr in enumerate(learners)])
    infos = rt.get([rt.call(learners[0], "update", seg_a), rt.call(learners[1], "update", seg_b)])
    assert [i["policy_version"] for i in infos] == [1, 1]
    params = rt.get([rt.call(lr, "params") for lr in learners])
    for p1, p2, q in zip(*params, one.params()):
        np.testing.assert_array_equal(p1, p2)                          # the group took one and the same step
        np.testing.assert_allclose(p1, q, rtol=1e-5, atol=1e-6)        # the step one learner takes on both halves
    for lr in learners: rt.kill(lr)


def _run(tmp_path, mode, **over):
    return Job("cartpole-impala", {**MODES[mode], "topology.num_learners": 2, "topology.num_workers": 2,
                                   "run.out": str(tmp_path), **over}).start().wait()


def test_a_sync_run_repeats_exactly(tmp_path, ray_cluster):
    ckpts = []
    for _ in range(2):
        job = _run(tmp_path, "sync-allreduce", **{"run.total_env_steps": 12_000, "run.target_return": None})
        ckpts.append(torch.load(sorted((job.run_dir / "checkpoints").glob("*.pt"))[-1], weights_only=True))
    assert ckpts[0]["version"] == ckpts[1]["version"] > 0
    for k, v in ckpts[0]["model"].items(): torch.testing.assert_close(v, ckpts[1]["model"][k], rtol=0, atol=0)


def test_hybrid_serves_the_same_weights_as_allreduce(tmp_path, ray_cluster):
    "hybrid only moves who serves the weights (a parameter server, fed by learner 0): a sync run takes the same steps as all-reduce."
    models = {}
    for mode in ("sync-allreduce", "sync-hybrid"):
        job = _run(tmp_path, mode, **{"run.total_env_steps": 12_000, "run.target_return": None})
        models[mode] = torch.load(sorted((job.run_dir / "checkpoints").glob("*.pt"))[-1], weights_only=True)
    a, h = models["sync-allreduce"], models["sync-hybrid"]
    assert a["version"] == h["version"] > 0
    for k, v in a["model"].items(): torch.testing.assert_close(v, h["model"][k], rtol=0, atol=0)


def test_async_hybrid_holds_its_staleness_window_and_balances_its_books(tmp_path, ray_cluster):
    """Workers run ahead on published weights; with max_staleness=0 every segment trained on is current, the rest
    counted. The server killed mid-run comes back empty and gets learner 0's weights again; the run goes on."""
    job = Job("cartpole-impala", {**MODES["async-hybrid"], "topology.num_learners": 2, "topology.num_workers": 2,
                                  "sync.max_staleness": 0, "run.total_env_steps": 30_000, "run.target_return": None,
                                  "run.log_interval_s": 0.2, "run.out": str(tmp_path)}).start()
    while len(job.metrics()) < 3: time.sleep(0.05)
    job.inject("kill_learner")
    job.wait()
    df, b = job.metrics(), job.books
    assert job.status == "finished" and df.learner_updates.iloc[-1] > 0 and b["learner_restarts"] == 1, (job.status, dict(b))
    assert df.policy_version.is_monotonic_increasing
    assert df.version_lag_max.max() == 0 and b["dropped_stale"] > 0        # lagging segments were dropped, not trained on
    assert b["produced"] == b["trained"] + b["rejected"] + b["dropped_stale"] + b["dropped_stop"] + b["lost_with_learner"], dict(b)


@pytest.mark.parametrize("window", [0, 1000])
def test_async_staleness_window(window, tmp_path, ray_cluster):
    "max_staleness=0 applies no stale gradient; a wide window applies every one; the counters add up."
    job = _run(tmp_path, "async-ps", **{"sync.max_staleness": window, "run.total_env_steps": 25_000, "run.target_return": None})
    b, lags = job.books, json.loads((job.run_dir / "meta.json").read_text())["gradient_lags"]
    assert b["gradients_pushed"] == b["gradients_applied"] + b["gradients_downweighted"] + b["gradients_dropped"] > 0
    assert b["produced"] == b["trained"] + b["rejected"] + b["dropped_stale"] + b["dropped_stop"] + b["lost_with_learner"], dict(b)
    if window == 0:
        assert set(lags["applied"]) <= {"0"}                            # nothing stale was applied
        assert b["gradients_dropped"] == sum(lags["dropped"].values()) and all(int(k) > 0 for k in lags["dropped"])
    else:
        assert b["gradients_dropped"] == 0 and b["gradients_applied"] == b["gradients_pushed"]


# sync-allreduce and async-hybrid learn in the heal test below (the same run, with a member killed on the way), which asserts
# all of this too. A run stops at its target (70k-130k steps in 8 of 8 async-ps runs here); the budget leaves room for the
# rare run whose stale gradients knock it back once (CI saw one peak at 455 and fall to 292 by 300k).
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["async-ps", "soft-ps"])
def test_each_mode_learns_cartpole_with_two_workers_and_two_learners(mode, tmp_path, ray_cluster):
    job = _run(tmp_path, mode, **{"run.total_env_steps": 600_000, "run.target_return": 475})
    df, b = job.metrics(), job.books
    assert job.status == "finished" and df.episode_return_mean.iloc[-1] >= 475, (mode, df.episode_return_mean.max(), df.env_steps.iloc[-1])
    assert b["produced"] == b["trained"] + b["rejected"] + b["dropped_stale"] + b["dropped_stop"] + b["lost_with_learner"], dict(b)
    assert {"sync_rtt_ms", "grad_lag_mean", "lag_hist_0"} <= set(df.columns)
    if mode == "async-ps":      # every version is one gradient of one segment (2 workers, 2 learners), pushed to the server
        assert b["gradients_pushed"] >= df.policy_version.iloc[-1] > 0 and b["trained"] <= b["gradients_pushed"], dict(b)
    else:                       # soft: no gradient pushed; every version averages rounds of local_steps=4 segments each
        assert b["gradients_pushed"] == 0 and b["trained"] >= 4 * df.policy_version.iloc[-1] > 0, dict(b)


@pytest.mark.slow
def test_preemption_lets_a_sync_round_go_on_without_a_straggler(tmp_path, ray_cluster):
    "DD-PPO-style preemption: with a straggler and preempt_fraction 0.5, rounds proceed without it; its segments join later."
    job = Job("cartpole-ppo", {"sync.preempt_fraction": 0.5, "run.total_env_steps": 150_000, "run.out": str(tmp_path)}).start()
    job.inject("slow_worker", worker=1, seconds=0.15)
    job.wait()
    df, b = job.metrics(), job.books
    assert job.status == "finished" and df.episode_return_mean.iloc[-1] >= 475, df.episode_return_mean.max()
    assert b["preempted_rounds"] > 0 and df.version_lag_max.max() >= 1          # the straggler's segments arrived late
    assert job.produced_by_worker[1] < job.produced_by_worker[0]                # and it did not set the pace
    assert b["produced"] == b["trained"] + b["rejected"] + b["dropped_stale"] + b["dropped_stop"] + b["lost_with_learner"], dict(b)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sync-allreduce", "async-hybrid"])
def test_a_learner_group_that_loses_a_member_is_rebuilt_and_still_reaches_its_target(mode, tmp_path, ray_cluster):
    """Member 1 of the all-reduce group dies mid-run: the group is built again from the newest checkpoint, every
    member from the same state, versions stay monotonic, the books count the lost round, and the run still solves.
    The budget is the mode's learning test's (above; a run stops at its target): at 300k, an async-hybrid run knocked
    back by its stale gradients peaked at 362 and ended at 285 (the slow tier's first CI run, 2026-12-06)."""
    job = Job("cartpole-impala", {**MODES[mode], "topology.num_learners": 2, "topology.num_workers": 2, "run.checkpoint_every": 5,
                                  "run.total_env_steps": 600_000, "run.target_return": 475, "run.log_interval_s": 0.2,
                                  "run.out": str(tmp_path)}).start()
    while job.status == "running" and (len(job.metrics()) < 3 or job.metrics().learner_updates.iloc[-1] < 10): time.sleep(0.05)
    job.inject("kill_learner", worker=1)
    job.wait()
    df, b, meta = job.metrics(), job.books, json.loads((job.run_dir / "meta.json").read_text())
    assert job.status == "finished" and df.episode_return_mean.iloc[-1] >= 475, (df.episode_return_mean.max(), dict(b))
    assert b["learner_group_rebuilds"] == 1 and df.learner_group_rebuilds.iloc[-1] == 1, dict(b)
    rebuild = meta["learner_group_rebuilds"][0]
    assert rebuild["restored_from"] is not None and rebuild["version_floor"] > 0, rebuild
    assert df.policy_version.is_monotonic_increasing
    assert b["lost_with_learner"] > 0
    assert b["produced"] == b["trained"] + b["rejected"] + b["dropped_stale"] + b["dropped_stop"] + b["lost_with_learner"], dict(b)
    assert {"sync_rtt_ms", "grad_lag_mean", "lag_hist_0"} <= set(df.columns)       # (what the mode's learning test asked)


@pytest.mark.parametrize("collective", ["allgather", "hierarchical"])
def test_an_on_device_data_parallel_group_keeps_one_set_of_weights_and_learns(collective, tmp_path, ray_cluster):
    """`topology.mode: on-device` with 2 learners on Ray: two trainer processes, each stepping its own 32 envs, average
    their gradients over gloo at every optimizer step, by an all-gather or a hierarchy (groups of one, their leaders
    all-reducing: every call of the hierarchy; the flat all-reduce is the default of the other group tests). Mid-run
    both hold bit-identical weights at the same version; the job learns CartPole to 475, and each member's env steps
    are in the books."""
    job = Job("cartpole-ondevice", {"run.runtime": "ray", "topology.num_learners": 2, "topology.device": "cpu",
                                    "sync.collective": collective, "sync.group_size": 1,
                                    "run.total_env_steps": 400_000, "run.out": str(tmp_path)}).start()
    rt = job.runtime
    while len(job.metrics()) < 3 and job.status == "running": time.sleep(0.05)
    for _ in range(20):         # a state taken between two steps of each member: the same version on both
        states = rt.get([rt.call(m, "state_dict") for m in job.learners])
        if states[0]["version"] == states[1]["version"]: break
    assert len(job.learners) == 2 and states[0]["version"] == states[1]["version"] > 0
    for k, v in states[0]["model"].items(): assert torch.equal(v, states[1]["model"][k]), k
    assert not torch.equal(states[0]["obs"], states[1]["obs"])        # each member steps its own envs
    job.wait()
    df = job.metrics()
    assert job.status == "finished" and df.episode_return_mean.iloc[-1] >= 475, df.episode_return_mean.max()
    assert set(job.steps_by_worker) == {0, 1} and job.steps_by_worker[0] == job.steps_by_worker[1] > 0
    assert job.books["produced"] == job.books["trained"] == 2 * df.learner_updates.iloc[-1]
