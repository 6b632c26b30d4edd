"""The planner against real runs on this machine (#38's check, before `ddrl-lab plan --validate` exists).

    .venv/bin/python bench/plan_validate.py [--steps 60000]

For the barrier (`cartpole-ppo`, minibatches of 128 so that one worker fits) and the channel (`cartpole-impala`):
calibrate on Ray (unit costs, a remote call, the driver's CPU per segment), predict 1 and 2 workers with the
workers, the learner and the driver sharing this machine's usable cores, then run each on Ray and compare the median
row after the first 30 % of the run: env steps/s, the learner's busy fraction, the version lag.
"""
import argparse
import os
import tempfile

import numpy as np
import torch

from ddrl_lab import Job
from ddrl_lab.config import load_config
from ddrl_lab.plan_costs import calibrate, plan

CASES = [("cartpole-ppo", "barrier", {"algo.minibatch_size": 128}), ("cartpole-impala", "channel", {})]


def measured(preset: str, overrides: dict, workers: int, steps: int) -> dict:
    job = Job(preset, {**overrides, "run.runtime": "ray", "topology.num_workers": workers, "run.total_env_steps": steps,
                       "run.target_return": None, "run.log_interval_s": 1.0, "run.record_episode": 0,
                       "run.out": tempfile.mkdtemp()}).start().wait()
    df = job.metrics()
    late = df[df.time_s > df.time_s.iloc[-1] * 0.3]
    return dict(env_steps_per_s=float(np.median(late.env_steps_per_s)),
                learner_busy=float(np.median(late.learner_busy_fraction)),
                lag_max=float(np.median(late.version_lag_max.fillna(0))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60_000)
    a = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    print(f"CPU: {torch.backends.cpu.get_cpu_capability()}, bf16 native: {torch.ops.mkldnn._is_mkldnn_bf16_supported()}, "
          f"{cores} cores")
    worst = 0.0
    for preset, topology, overrides in CASES:
        cfg = load_config(preset, {**overrides, "run.runtime": "ray"})
        cal = calibrate(cfg)
        print(f"{preset}: {cal.costs}")
        predicted = {r["workers"]: r for r in plan(cfg, [1, 2], "loopback", cal, cores=cores) if r["topology"] == topology}
        for n, p in predicted.items():
            m = measured(preset, overrides, n, a.steps)
            err = p["env_steps_per_s"] / m["env_steps_per_s"] - 1
            worst = max(worst, abs(err))
            print(f"{topology} ({preset}), {n} worker(s): predicted {p['env_steps_per_s']} env steps/s, learner busy "
                  f"{p['learner_busy']}, lag p95 {p['lag_p95']}; measured {m['env_steps_per_s']:.0f} ({err:+.0%}), "
                  f"busy {m['learner_busy']:.2f}, lag max {m['lag_max']:.0f}", flush=True)
    print(f"worst throughput error: {worst:.0%}")


if __name__ == "__main__":
    main()
