"""Numerics chosen for the machine (issue #34), on whatever CPU runs the suite: with native bf16 masked
(`ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2`, the documented way to make torch dispatch as on an AVX2-only CPU),
`algo.bf16: auto` runs fp32 and an explicit `true` runs but leaves its warning in run.log, meta.json and the doctor;
a model whose input is channels-last gives the default layout's outputs, updates and checkpoint."""
import json
import subprocess

import gymnasium as gym
import numpy as np
import pytest
import torch
import yaml

from conftest import BIN, ROOT

MASKED = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}
WARNING = "bf16 is emulated on this CPU: about 10× slower; set algo.bf16=auto"


@pytest.fixture
def masked_env(child_env):
    "A subprocess environment in which this CPU looks like an AVX2-only one."
    return dict(child_env, **MASKED)


def test_the_mask_makes_torch_report_avx2_without_native_bf16(masked_env):
    "Check the mask before trusting anything measured under it."
    code = "import torch; print(torch.backends.cpu.get_cpu_capability(), torch.ops.mkldnn._is_mkldnn_bf16_supported())"
    r = subprocess.run([str(BIN / "python"), "-c", code], env=masked_env, capture_output=True, text=True, timeout=120)
    assert r.stdout.split() == ["AVX2", "False"], r.stdout + r.stderr


def test_the_numerics_notebook_passes_with_bf16_masked(masked_env):
    "05a's tests take the emulated branch here (the suite's own run of it takes whichever this CPU has)."
    r = subprocess.run([str(BIN / "nbdev_test"), "--path", "nbs/nn/03_numerics.ipynb"], cwd=ROOT, env=masked_env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def _run(tmp_path, env, *sets):
    "`ddrl-lab run minatar-breakout` (a CNN, on-device) for two rollouts; the run directory and the CLI's stderr."
    out = tmp_path / "runs"
    args = ["run", "minatar-breakout", "--quiet", "--out", str(out), "--set", "run.total_env_steps=8192",
            "--set", "run.target_return=null", *[a for s in sets for a in ("--set", s)]]
    r = subprocess.run([str(BIN / "ddrl-lab"), *args], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    return run_dir, r.stderr


def test_auto_runs_fp32_where_bf16_is_emulated_and_the_config_keeps_auto(tmp_path, masked_env):
    run_dir, stderr = _run(tmp_path, masked_env)
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["machine"]["cpu_capability"] == "AVX2" and meta["machine"]["bf16_native"] is False
    assert meta["numerics"]["bf16"] is False and meta["numerics"]["bf16_setting"] == "auto"
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["algo"]["bf16"] == "auto"   # a resume chooses again
    assert "warnings" not in meta and not (run_dir / "run.log").exists() and "emulated" not in stderr


def test_an_explicit_true_where_bf16_is_emulated_runs_and_says_so_once(tmp_path, masked_env):
    run_dir, stderr = _run(tmp_path, masked_env, "algo.bf16=true")
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "finished" and meta["numerics"]["bf16"] is True
    assert meta["warnings"] == [WARNING]
    log = (run_dir / "run.log").read_text()
    assert log.count(WARNING) == 1 and stderr.count(WARNING) == 1
    doctor = subprocess.run([str(BIN / "ddrl-lab"), "doctor", str(run_dir), "--json"], env=masked_env,
                            capture_output=True, text=True, timeout=120)
    checks = [c for s in json.loads(doctor.stdout)["stages"] for c in s["checks"] if c["name"] == "numerics"]
    assert [(c["figures"], c["ok"]) for c in checks] == [(WARNING, False)]
    assert "algo.bf16=auto" in checks[0]["next_step"]


def _segment(T: int, M: int, seed: int):
    "A Pong-shaped segment (random uint8 frames, random actions and rewards)."
    from ddrl_lab.data.segments import Segment
    rng = np.random.default_rng(seed)
    shape = (4, 84, 84)
    return Segment(obs=rng.integers(0, 256, (T, M, *shape), np.uint8), actions=rng.integers(0, 6, (T, M)),
                   logp=np.full((T, M), -np.log(6), np.float32), rewards=rng.choice([-1.0, 0.0, 1.0], (T, M)).astype(np.float32),
                   terminated=np.zeros((T, M), bool), truncated=np.zeros((T, M), bool),
                   next_obs=rng.integers(0, 256, (M, *shape), np.uint8), final_obs=np.zeros((0, *shape), np.uint8),
                   final_index=np.zeros(0, np.int64), policy_version=0, worker_id=0, seq=seed)


def _replay_batch(n: int, seed: int) -> dict:
    "A DQN batch as a replay shard samples it (Pong-shaped frames)."
    rng = np.random.default_rng(seed)
    frames = lambda: rng.integers(0, 256, (n, 4, 84, 84), np.uint8)
    return dict(obs=frames(), boot_obs=frames(), action=rng.integers(0, 6, n), ret=rng.normal(size=n).astype(np.float32),
                discount=np.full(n, 0.99, np.float32), weights=np.ones(n, np.float32), policy_version=np.zeros(n, np.int64),
                shard_id=np.zeros(n, np.int64), index=np.arange(n), insert_index=np.arange(n))


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_a_channels_last_learner_matches_the_default_layout(tmp_path, algo):
    "Same outputs, the same update and the same checkpoint (within 1e-5) in both layouts; checkpoints load across them."
    from ddrl_lab.config.load import load_config
    from ddrl_lab.learners.algorithms import LEARNERS
    obs_space, act_space = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8), gym.spaces.Discrete(6)
    common = {"algo.name": algo, "algo.bf16": False, "env.num_envs": 2, "algo.segment_length": 8, "algo.minibatch_size": 16,
              "algo.epochs": 1, "algo.batch_size": 16, "replay.kind": "uniform" if algo == "dqn" else "none"}
    learners = {}
    for layout in (False, True):
        cfg = load_config("pong-ppo", {**common, "algo.channels_last": layout})
        learners[layout] = LEARNERS[algo](cfg, obs_space, act_space, num_threads=torch.get_num_threads())
    default, cl = learners[False], learners[True]
    assert (default.numerics.channels_last, cl.numerics.channels_last) == (False, True)
    frames = torch.as_tensor(_segment(1, 4, 0).obs[0])
    with torch.no_grad():
        torch.testing.assert_close(cl.model.value(frames), default.model.value(frames), rtol=0, atol=1e-5)
    batch = _replay_batch(16, 1) if algo == "dqn" else _segment(8, 2, 1)
    default.update(batch)
    cl.update(batch)
    for (k, a), (k2, b) in zip(default.model.state_dict().items(), cl.model.state_dict().items()):
        assert k == k2 and a.is_contiguous() and b.is_contiguous()
        torch.testing.assert_close(b, a, rtol=0, atol=1e-5, msg=f"{k} differs after one update")
    path = tmp_path / "cl.pt"
    torch.save(dict(cl.state_dict(), config_hash=None), path)
    fresh = LEARNERS[algo](load_config("pong-ppo", {**common, "algo.channels_last": False}), obs_space, act_space)
    fresh.load_state_dict(torch.load(path, weights_only=True))
    for k, v in cl.model.state_dict().items():
        torch.testing.assert_close(fresh.model.state_dict()[k], v, rtol=0, atol=0)
