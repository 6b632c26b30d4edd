"""SAC or TD3 on Pendulum-v1: the shipped preset (`pendulum-sac` or `pendulum-td3`: 2 Ray workers feeding one replay
shard, one gradient step per env step) against stable-baselines3's SAC or TD3 with the same hyperparameters (lr 1e-3,
batch 256, two 256-unit layers, tau 0.005, gamma 0.99, 1,000 random steps before learning, one gradient step per env
step; SAC: automatic temperature from 1.0; TD3: acting noise 0.1 and target noise 0.2 clipped at 0.5, in half-ranges
of the action, the actor every second step), over the same seeds, in one run on one machine, for the same env-step
budget.

    .venv/bin/python bench/pendulum.py [--algo sac|td3] [--preset pendulum-ondevice-sac] [--seeds 0,1,2]
                                       [--steps 20000] [--out pendulum_sac.json]

`--preset` runs another preset of the same algorithm on our side (`pendulum-ondevice-sac`: the whole loop on one
device, the torch Pendulum, which is gymnasium's step for step).

Both sides are measured the same way: the mean return of the last 20 finished training episodes (the rows'
`episode_return_mean`), and the first env step and wall time at which it reaches -200 (ours: the row's `time_s`,
from the driver loop's start, Ray up; SB3: from `learn()`'s start). SB3 is the bench extra
(`pip install -e .[bench]`).
"""
import argparse
import json
import statistics
import tempfile
import time

import numpy as np
import torch

from ddrl_lab import Job
from ddrl_lab.bench.harness import machine_info

TARGET, WINDOW = -200.0, 20
THREADS = torch.get_num_threads()  # the machine's default, before any job of ours sets its own


def ours(preset: str, seed: int, steps: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        job = Job(preset, {"run.seed": seed, "run.total_env_steps": steps, "run.target_return": None,
                                   "run.out": d, "run.record_episode": 0}).start().wait()
        df = job.metrics().dropna(subset=["episode_return_mean"])
    return dict(env_steps=df.env_steps.tolist(), time_s=df.time_s.tolist(), ret=df.episode_return_mean.tolist(),
                status=job.status)


def sb3(algo: str, seed: int, steps: int) -> dict:
    import gymnasium as gym
    from stable_baselines3 import SAC, TD3
    from stable_baselines3.common.noise import NormalActionNoise
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor

    # (an in-process job of ours, as the on-device one, sets this process's torch threads: SB3 gets the default back)
    torch.set_num_threads(THREADS)
    env = Monitor(gym.make("Pendulum-v1"))
    curve = dict(env_steps=[], time_s=[], ret=[])

    class Curve(BaseCallback):
        def _on_training_start(self):
            self.t0 = time.perf_counter()

        def _on_step(self):
            if len(env.get_episode_rewards()) > len(curve["ret"]) and self.num_timesteps >= 1:
                returns = env.get_episode_rewards()
                curve["env_steps"].append(self.num_timesteps)
                curve["time_s"].append(time.perf_counter() - self.t0)
                curve["ret"].append(float(np.mean(returns[-WINDOW:])))
            return True

    common = dict(learning_rate=1e-3, buffer_size=100_000, learning_starts=1000, batch_size=256, tau=0.005, gamma=0.99,
                  train_freq=1, gradient_steps=1, policy_kwargs=dict(net_arch=[256, 256]), seed=seed, device="cpu",
                  verbose=0)
    if algo == "sac":
        model = SAC("MlpPolicy", env, ent_coef="auto_1.0", **common)
    else:  # (SB3 adds both noises to actions scaled to [-1, 1]: in half-ranges, as ours)
        noise = NormalActionNoise(np.zeros(1), 0.1 * np.ones(1))
        model = TD3("MlpPolicy", env, action_noise=noise, policy_delay=2, target_policy_noise=0.2,
                    target_noise_clip=0.5, **common)
    model.learn(steps, callback=Curve())
    curve["status"] = "finished"
    return curve


def first_reach(curve: dict) -> dict:
    for s, t, r in zip(curve["env_steps"], curve["time_s"], curve["ret"]):
        if r >= TARGET:
            return dict(env_steps=int(s), time_s=float(t))
    return dict(env_steps=None, time_s=None)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--algo", default="sac", choices=("sac", "td3"))
    p.add_argument("--preset", default=None, help="our side's preset (default: pendulum-ALGO)")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    args.out = args.out or f"pendulum_{args.algo}.json"
    seeds = [int(s) for s in args.seeds.split(",")]
    preset = args.preset or f"pendulum-{args.algo}"
    out = dict(machine=machine_info(), algo=args.algo, preset=preset, steps=args.steps, target=TARGET, window=WINDOW,
               runs=[])
    for seed in seeds:  # interleaved: a busy spell hits both sides of a seed
        for side, fn, arg in (("ddrl_lab", ours, preset), ("sb3", sb3, args.algo)):
            curve = fn(arg, seed, args.steps)
            hit = first_reach(curve)
            final = curve["ret"][-1] if curve["ret"] else None
            out["runs"].append(dict(side=side, seed=seed, reached=hit, final=final, curve=curve))
            print(f"{side:9s} seed {seed}: final {final:8.1f}; -200 at {hit['env_steps']} env steps, {hit['time_s']} s",
                  flush=True)
    for side in ("ddrl_lab", "sb3"):
        runs = [r for r in out["runs"] if r["side"] == side]
        hit = [r["reached"]["time_s"] for r in runs if r["reached"]["time_s"] is not None]
        print(f"{side}: {len(hit)}/{len(runs)} seeds reach {TARGET:g}; median time to it "
              f"{statistics.median(hit) if hit else None} s")
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
