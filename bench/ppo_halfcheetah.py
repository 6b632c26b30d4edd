"""PPO with the Gaussian head on MuJoCo HalfCheetah-v5: the shipped preset `halfcheetah-ppo` (CleanRL's
ppo_continuous_action hyperparameters, observations normalised, co-located) for 1,000,000 env steps on several seeds,
and the same with `env.normalize_obs` off, or with `env.normalize_reward` on too, side by side in one run.

    .venv/bin/python bench/ppo_halfcheetah.py [--seeds 0,1,2] [--steps 1000000] [--raw-seeds 0] [--reward-seeds ""]
                                              [--out ppo_halfcheetah.json]

Each run: the mean return of its last 20 episodes at the end, the first env step at which it reached 1,500 (the
preset's target; CleanRL reports 1,400-3,000 at 1 M steps on v4), and its wall time. The peer figure is CleanRL's
published one, not a run here.
"""
import argparse
import json
import tempfile
import time

from ddrl_lab import Job
from ddrl_lab.bench.harness import machine_info

TARGET = 1500.0


def run(seed: int, steps: int, normalize: bool, rewards: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        job = Job("halfcheetah-ppo", {"run.seed": seed, "run.total_env_steps": steps, "run.target_return": None,
                                      "env.normalize_obs": normalize, "env.normalize_reward": rewards, "run.out": d,
                                      "run.record_episode": 0}).start().wait()
        wall = time.perf_counter() - t0
        df = job.metrics().dropna(subset=["episode_return_mean"])
    reached = df[df.episode_return_mean >= TARGET]
    return dict(seed=seed, normalize_obs=normalize, normalize_reward=rewards, status=job.status, wall_s=wall,
                final=float(df.episode_return_mean.iloc[-1]),
                reached_at=int(reached.env_steps.iloc[0]) if len(reached) else None,
                curve=dict(env_steps=df.env_steps.tolist(), ret=df.episode_return_mean.tolist()))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--raw-seeds", default="0")
    p.add_argument("--reward-seeds", default="", help="seeds run with env.normalize_reward on as well")
    p.add_argument("--steps", type=int, default=1_000_000)
    p.add_argument("--out", default="ppo_halfcheetah.json")
    args = p.parse_args()
    out = dict(machine=machine_info(), steps=args.steps, target=TARGET, runs=[])
    seeds = lambda text: [int(s) for s in text.split(",") if s]
    plan = ([(s, True, False) for s in seeds(args.seeds)] + [(s, False, False) for s in seeds(args.raw_seeds)]
            + [(s, True, True) for s in seeds(args.reward_seeds)])
    for seed, normalize, rewards in plan:
        r = run(seed, args.steps, normalize, rewards)
        out["runs"].append(r)
        print(f"seed {seed} normalize_obs={normalize} normalize_reward={rewards}: final {r['final']:.0f}, {TARGET:g} at {r['reached_at']} env steps, "
              f"{r['wall_s']:.0f} s", flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
