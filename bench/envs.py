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

from ddrl_lab.bench.harness import items_per_s
from ddrl_lab.bench.sampling import pool_rate, stepper, torch_pool_rate
from ddrl_lab.config.schema import EnvConfig
from ddrl_lab.envs.cpu import EnvFn, InlinePool, ProcessPool, env_seeds


def plain_loop(env_cfg: EnvConfig, seconds: float) -> float:
    "The baseline: one env in a plain Python loop, `reset` when an episode ends."
    return items_per_s(stepper("env", env_cfg), 1, seconds)


def raw_ale_rate(env_cfg: EnvConfig, seconds: float) -> float:
    "ale-py's own interface, no gymnasium, no preprocessing: 4 frames per agent step."
    return items_per_s(stepper("ale-raw", env_cfg), 1, seconds)


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
    base = plain_loop(cp, S)
    rows.append(("gymnasium CartPole-v1, plain 1-env loop", base, 1, None, None))
    for m in (8, 16, 32):
        cm = EnvConfig(id="CartPole-v1", num_envs=m)
        rows.append((f"ddrl_lab InlinePool CartPole x{m}", pool_rate(InlinePool([EnvFn(cm)] * m), env_seeds(cm, 0), S), 1, "plain loop", base))
    vec = gym.make_vec("CartPole-v1", 8, vectorization_mode="sync")
    vec.reset(seed=0)
    acts = np.random.default_rng(0).integers(2, size=(256, 8))
    rows.append(("gymnasium SyncVectorEnv CartPole x8", items_per_s(lambda i: vec.step(acts[i & 255]), 8, S), 1, "plain loop", base))
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
            rows.append((f"ddrl_lab torch {env_id} x4096 (CPU, 1 thread)", torch_pool_rate(env_id, 4096, S), 1, "plain loop", base))
    except ImportError as e:
        print(f"torch envs skipped: {e}")

    if not args.skip_ale:
        ale = EnvConfig(id="ALE/Pong-v5", backend="ale", num_envs=4)
        raw = raw_ale_rate(ale, S)
        pre = plain_loop(ale, S)
        rows.append(("ale-py Pong, raw ALEInterface (4 frames/step)", raw, 1, None, None))
        rows.append(("gymnasium Pong + AtariPreprocessing + 4-stack, plain loop", pre, 1, "raw ale-py", raw))
        rows.append(("ddrl_lab InlinePool Pong x4 (same preprocessing)", pool_rate(InlinePool([EnvFn(ale)] * 4), env_seeds(ale, 0), S), 1, "plain loop + preproc", pre))

    print(f"\n{'pool':62s} {'steps/s':>12s} {'per core':>12s}  ratio per core")
    for name, rate, cores, bname, brate in rows:
        ratio = "" if brate is None else f"{rate / cores / brate:7.2f}x {bname}"
        print(f"{name:62s} {rate:12,.0f} {rate / cores:12,.0f}  {ratio}")


if __name__ == "__main__":
    main()
