"""A non-finite gradient never reaches the weights: the `nan_grad` drill on every kind of learner step (a host
learner, a parameter server, the on-device trainers), the counts in the rows, the doctor's word, and the stop
after `algo.max_skipped_updates` in a row with a checkpoint of the weights from before the first skip."""
import pytest
import torch

from ddrl_lab import Job
from ddrl_lab.analysis.doctor import diagnose_run
from ddrl_lab.nn.optim import NonFiniteGradients

# (preset, overrides): a host PPO learner (barrier loop), a host DQN learner (replay loop), a parameter server
# that applies two learners' gradients, the on-device PPO and DQN trainers. All in-process.
STEPPERS = {
    "host-ppo": ("cartpole-ppo", {}),
    "host-dqn": ("cartpole-dqn", {"algo.learning_starts": 256}),
    "parameter-server": ("cartpole-ppo", {"topology.num_learners": 2, "sync.aggregation": "parameter-server"}),
    "ondevice-ppo": ("cartpole-ondevice", {}),
    "ondevice-dqn": ("cartpole-ondevice-dqn", {"algo.learning_starts": 256}),
}


def _params(ckpt) -> torch.Tensor:
    sd = torch.load(ckpt, weights_only=True)
    return torch.cat([v.flatten().float() for v in sd["model"].values()]), sd["optimizer"]


@pytest.mark.parametrize("name", STEPPERS)
def test_the_nan_grad_drill_is_skipped_counted_and_survived(name, tmp_path):
    preset, overrides = STEPPERS[name]
    job = Job(preset, {**overrides, "run.runtime": "serial", "run.total_env_steps": 8192, "run.target_return": None,
                       "run.faults": ["3072:nan_grad:0:0"], "algo.max_skipped_updates": 100_000,
                       "run.log_interval_s": 0, "run.out": str(tmp_path)}).start().wait()
    df = job.metrics()
    assert job.status == "finished", job.meta.get("error")
    assert df.env_steps.iloc[-1] >= 8192
    skipped = int(df.skipped_updates.max())
    assert skipped == 1, f"a drill of 0 s poisons one backward pass: one step skipped, not {skipped}"
    assert df.skipped_updates.iloc[0] == 0 and df.skipped_updates.is_monotonic_increasing
    params, opt = _params(sorted((job.run_dir / "checkpoints").glob("*.pt"))[-1])
    assert torch.isfinite(params).all(), "a NaN reached the weights"
    assert opt["skipped_updates"] == skipped and opt["skipped_in_a_row"] == 0   # steps were taken again after it
    algorithm = next(s for s in diagnose_run(job.run_dir).stages if s.name == "algorithm")
    check = [c for c in algorithm.checks if c.name == "skipped updates"]
    assert check and check[0].ok and "during the nan_grad drill" in check[0].figures, check


def test_too_many_skips_in_a_row_stop_the_run_with_a_checkpoint(tmp_path):
    job = Job("cartpole-ppo", {"run.runtime": "serial", "run.total_env_steps": 50_000, "run.target_return": None,
                               "run.faults": ["2048:nan_grad:0:600"], "algo.max_skipped_updates": 3,
                               "run.checkpoint_every": 1, "run.out": str(tmp_path)}).start()
    with pytest.raises(NonFiniteGradients, match=r"algo.max_skipped_updates = 3"):
        job.wait()
    assert job.status == "failed" and "non-finite gradient" in job.meta["error"]
    assert job.metrics().env_steps.iloc[-1] < 10_000     # it stopped at once, not at the budget
    ckpts = sorted((job.run_dir / "checkpoints").glob("*.pt"))
    (before, _), (last, opt) = _params(ckpts[-2]), _params(ckpts[-1])
    assert opt["skipped_in_a_row"] >= 3 and torch.isfinite(last).all()
    assert torch.equal(before, last), "a skipped step changed the weights"
