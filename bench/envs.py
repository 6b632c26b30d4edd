"""Env-pool throughput, side by side in one run, as ratios against the raw environment.

    .venv/bin/python bench/envs.py [--seconds 3] [--skip-ale] [--skip-process]

Every figure is env steps per second (agent steps; an Atari agent step is 4 frames) with
random actions drawn before timing, resets included. "per core" divides by the cores a pool
keeps busy (its processes, or 1 for in-process pools and single-threaded torch).
"""
import argparse
import os

import gymnasium as gym
import numpy as np
import torch

from common import timed
from ddrl_lab.config import EnvConfig
from ddrl_lab.envs import EnvFn, InlinePool, ProcessPool, env_seeds, make_single_env


def plain_loop(env: gym.Env, seconds: float, seed: int = 0) -> float:
    "The baseline: one env in a plain Python loop, `reset` when an episode ends."
    env.reset(seed=seed)
    acts = np.random.default_rng(seed).integers(env.action_space.n, size=1 << 16).tolist()
    def step(i):
        _, _, te, tr, _ = env.step(acts[i & 0xFFFF])
        if te or tr: env.reset()
    return timed(step, 1, seconds)


def pool_rate(pool, seeds, seconds: float) -> float:
    pool.reset(seeds)
    acts = np.random.default_rng(0).integers(pool.single_action_space.n, size=(256, pool.num_envs))
    return timed(lambda i: pool.step(acts[i & 255]), pool.num_envs, seconds)


def raw_ale_rate(game: str, seconds: float) -> float:
    "ale-py's own interface, no gymnasium, no preprocessing: 4 frames per agent step."
    import ale_py
    from ale_py import roms
    ale = ale_py.ALEInterface()
    ale.setInt("random_seed", 0); ale.setFloat("repeat_action_probability", 0.25)
    ale.loadROM(roms.get_rom_path(game))
    actions = ale.getMinimalActionSet()
    acts = np.random.default_rng(0).integers(len(actions), size=1 << 16).tolist()
    def step(i):
        for _ in range(4): ale.act(actions[acts[i & 0xFFFF]])
        if ale.game_over(): ale.reset_game()
    return timed(step, 1, seconds)


def torch_rate(env_id: str, num_envs: int, seconds: float) -> float:
    from ddrl_lab.torch_envs import make_torch_pool
    pool = make_torch_pool(env_id, num_envs)
    pool.reset(list(range(num_envs)))
    acts = torch.randint(0, pool.single_action_space.n, (64, num_envs), generator=torch.Generator().manual_seed(0))
    return timed(lambda i: pool.step(acts[i & 63]), num_envs, seconds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--skip-ale", action="store_true")
    ap.add_argument("--skip-process", action="store_true")
    args = ap.parse_args()
    S = args.seconds
    torch.set_num_threads(1)
    rows = []  # (name, steps/s, cores, baseline name, baseline steps/s)

    cp = EnvConfig(id="CartPole-v1", num_envs=8)
    base = plain_loop(make_single_env(cp), S)
    rows.append(("gymnasium CartPole-v1, plain 1-env loop", base, 1, None, None))
    for m in (8, 16, 32):
        cm = EnvConfig(id="CartPole-v1", num_envs=m)
        rows.append((f"ddrl_lab InlinePool CartPole x{m}", pool_rate(InlinePool([EnvFn(cm)] * m), env_seeds(cm, 0), S), 1, "plain loop", base))
    vec = gym.make_vec("CartPole-v1", 8, vectorization_mode="sync")
    vec.reset(seed=0)
    acts = np.random.default_rng(0).integers(2, size=(256, 8))
    rows.append(("gymnasium SyncVectorEnv CartPole x8", timed(lambda i: vec.step(acts[i & 255]), 8, S), 1, "plain loop", base))
    if not args.skip_process:
        procs = min(2, os.cpu_count() or 1)
        pcfg = EnvConfig(id="CartPole-v1", num_envs=procs)
        pp = ProcessPool([EnvFn(pcfg)] * procs)
        rate = pool_rate(pp, env_seeds(pcfg, 0), S); pp.close()
        rows.append((f"ddrl_lab ProcessPool CartPole x{procs} ({procs} procs)", rate, procs, "plain loop", base))
        ipc_us = (procs / rate - 1 / base) * 1e6
        print(f"process pool: {ipc_us:.0f} us per batched step beyond the env's own cost (IPC_OVERHEAD_S)")
    try:
        for env_id in ("CartPole-v1", "Breakout-MinAtar-v0"):
            rows.append((f"ddrl_lab torch {env_id} x4096 (CPU, 1 thread)", torch_rate(env_id, 4096, S), 1, "plain loop", base))
    except ImportError as e:
        print(f"torch envs skipped: {e}")

    if not args.skip_ale:
        ale = EnvConfig(id="ALE/Pong-v5", backend="ale", num_envs=4)
        raw = raw_ale_rate("pong", S)
        pre = plain_loop(make_single_env(ale), S)
        rows.append(("ale-py Pong, raw ALEInterface (4 frames/step)", raw, 1, None, None))
        rows.append(("gymnasium Pong + AtariPreprocessing + 4-stack, plain loop", pre, 1, "raw ale-py", raw))
        rows.append(("ddrl_lab InlinePool Pong x4 (same preprocessing)", pool_rate(InlinePool([EnvFn(ale)] * 4), env_seeds(ale, 0), S), 1, "plain loop + preproc", pre))

    print(f"\n{'pool':62s} {'steps/s':>12s} {'per core':>12s}  ratio per core")
    for name, rate, cores, bname, brate in rows:
        ratio = "" if brate is None else f"{rate / cores / brate:7.2f}x {bname}"
        print(f"{name:62s} {rate:12,.0f} {rate / cores:12,.0f}  {ratio}")


if __name__ == "__main__":
    main()
