"""IMPALA on ALE/Pong-v5, decoupled and asynchronous: 2 Ray workers, a CPU learner (bf16 autocast), for a wall-clock budget.

    .venv/bin/python bench/pong_impala.py [--minutes 60] [--out runs]

Prints the learning curve (episode return against frames, frames = 4 x agent steps) and the
training throughput in frames per second; the run directory keeps metrics.jsonl and report.html.
"""
import argparse
import time

from ddrl_lab import Job

PONG = {"env.backend": "ale", "env.id": "ALE/Pong-v5", "env.num_envs": 4, "env.frame_skip": 4, "env.frame_stack": 4,
        "algo.name": "impala", "algo.lr": 6e-4, "algo.segment_length": 20, "algo.epochs": 1, "algo.minibatch_size": 160,
        "algo.ent_coef": 0.01, "algo.gamma": 0.99, "algo.max_grad_norm": 40.0, "algo.bf16": True,
        "topology.num_workers": 2, "sync.mode": "async", "sync.max_staleness": 32, "channel.capacity": 8,
        "run.runtime": "ray", "run.total_env_steps": 10**9, "run.target_return": None, "run.return_window": 10,
        "run.log_interval_s": 10.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--out", default="runs")
    a = ap.parse_args()
    job = Job("cartpole-impala", {**PONG, "run.out": a.out}, name="pong-impala").start()
    t0 = time.monotonic()
    try: job.wait(timeout=a.minutes * 60)
    finally: job.stop()
    df = job.metrics()
    print(f"run directory: {job.run_dir}")
    print(f"{'minutes':>8} {'frames':>12} {'frames/s':>10} {'return (last 10)':>17} {'lag max':>8}")
    step = max(1, len(df) // 15)
    for _, r in df.iloc[::step].iterrows():
        print(f"{r.time_s / 60:8.1f} {4 * r.env_steps:12,.0f} {4 * r.env_steps_per_s:10,.0f} {r.episode_return_mean:17.2f} {r.version_lag_max:8.0f}")
    wall = time.monotonic() - t0
    print(f"{4 * df.env_steps.iloc[-1]:,} frames in {wall / 60:.1f} min: {4 * df.env_steps.iloc[-1] / df.time_s.iloc[-1]:,.0f} frames/s "
          f"(training, mean); final return {df.episode_return_mean.iloc[-1]:.2f}; status {job.status}")


if __name__ == "__main__":
    main()
