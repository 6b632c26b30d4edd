"""How many Pong frames per second this machine's CPU can learn from, emulator aside: the bound that compute puts
on `ddrl-lab bench atari`'s "learner / the ceiling" ratio (issue #19's target: 0.4).

    .venv/bin/python bench/atari_compute.py [--preset pong-impala] [--repeats 3] [--seconds 10] [--set key=value ...]

Per repeat, side by side: (a) the ceiling as `ddrl-lab bench atari` measures it (`AtariVectorEnv` alone, 16 envs,
random actions); (b) the preset's own learner (`IMPALALearner`/`PPOLearner` of the job, every CPU thread) updating
on synthetic Pong segments of its own shape (uint8 84x84x4 stacks, the job's batch), plus the acting forward pass a
worker makes per env step (batch = env.num_envs), with no emulator at all. (b) is an upper bound on the frames/s of
any topology of this workbench on this machine; the ratio b / a bounds "learner / the ceiling".
"""
import argparse
import dataclasses
import statistics
import time

import numpy as np
import torch

from ddrl_lab.learners.algorithms import LEARNERS
from ddrl_lab.bench.atari import native_pool_rate
from ddrl_lab.config.load import load_config
from ddrl_lab.nn.numerics import choose_numerics, compute_info
from ddrl_lab.envs.pools import env_spaces
from ddrl_lab.data.segments import Segment


def pong_segment(cfg, obs_space, seed: int) -> Segment:
    "A segment of the job's shape (segment_length x num_envs) with random uint8 frames and random actions."
    rng = np.random.default_rng(seed)
    T, M = cfg.algo.segment_length, cfg.env.num_envs
    obs = rng.integers(0, 256, (T, M, *obs_space.shape), np.uint8)
    return Segment(obs=obs, actions=rng.integers(0, 6, (T, M)), logp=np.full((T, M), -np.log(6), np.float32),
                   rewards=rng.choice([-1.0, 0.0, 1.0], (T, M)).astype(np.float32), terminated=np.zeros((T, M), bool),
                   truncated=np.zeros((T, M), bool), next_obs=rng.integers(0, 256, (M, *obs_space.shape), np.uint8),
                   final_obs=np.zeros((0, *obs_space.shape), np.uint8), final_index=np.zeros(0, np.int64),
                   policy_version=0, worker_id=0, seq=seed)


def network_rate(cfg, seconds: float) -> float:
    "Env steps/s that acting + learning alone allow: per sample, 1/num_envs of an acting batch and 1/batch of an update."
    learn_s, act_s = network_times(cfg, seconds)
    return 1.0 / (learn_s + act_s)


def network_times(cfg, seconds: float) -> tuple:
    "Seconds per env step of the learner's update and of the acting forward pass, each alone with every CPU thread."
    obs_space, action_space = env_spaces(cfg.env)
    learner = LEARNERS[cfg.algo.name](cfg, obs_space, action_space, num_threads=torch.get_num_threads())
    per_update = max(1, cfg.algo.minibatch_size // (cfg.algo.segment_length * cfg.env.num_envs))
    segs = [pong_segment(cfg, obs_space, s) for s in range(per_update)]
    samples = per_update * cfg.algo.segment_length * cfg.env.num_envs
    learner.update(*segs)                                       # warm-up
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds / 2:
        learner.update(*segs); n += 1
    learn_s = (time.perf_counter() - t0) / (n * samples)
    obs = torch.as_tensor(segs[0].obs[0])
    t0, n = time.perf_counter(), 0
    with torch.no_grad(), learner.autocast():
        while time.perf_counter() - t0 < seconds / 2:
            learner.model.act(obs); n += 1
    act_s = (time.perf_counter() - t0) / (n * cfg.env.num_envs)
    return learn_s, act_s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="pong-impala")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--set", action="append", default=[], help="section.key=value overrides, as ddrl-lab run takes them")
    a = ap.parse_args()
    cfg = load_config(a.preset, a.set)
    env = dataclasses.replace(cfg.env, num_envs=16)
    k = cfg.env.frame_skip
    rows = []
    for i in range(a.repeats):
        ceiling = k * native_pool_rate(env, a.seconds / 2)
        net = k * network_rate(cfg, a.seconds)
        rows.append((ceiling, net, net / ceiling))
        print(f"repeat {i + 1}: ceiling {ceiling:,.0f} frames/s; {a.preset}'s network alone {net:,.0f} frames/s; ratio {net / ceiling:.3f}")
    med = [statistics.median(c) for c in zip(*rows)]
    print(f"median of {a.repeats}: ceiling {med[0]:,.0f} frames/s, network alone {med[1]:,.0f} frames/s, "
          f"bound on learner / ceiling {med[2]:.3f} (target 0.4), torch threads {torch.get_num_threads()}, "
          f"numerics {choose_numerics(cfg, env_spaces(cfg.env)[0].shape).to_dict()} (algo.bf16 = {cfg.algo.bf16}); machine {compute_info()}")


if __name__ == "__main__":
    main()
