"""A Pong preset (`pong-ppo-fast`, `pong-ppo` or `pong-impala`) run as `ddrl-lab run` runs it, for a wall-clock budget, with its curve.

    .venv/bin/python bench/pong.py [--preset pong-impala] [--minutes 60] [--seed 0] [--out runs] [--set key=value ...]

Prints the learning curve (mean of the last 10 real episode returns against frames and minutes; frames = agent
steps x env.frame_skip), the first time that mean reached 0 and the preset's target (18; the goals of issues #19 and #34) and the training throughput in
frames per second.
Random play scores about -20.5 (the first episodes of the same run show it). The run directory keeps metrics.jsonl
and report.html. A benchmark, not a test: it takes the whole budget.
"""
import argparse
import time

from ddrl_lab import Job
from ddrl_lab.nn.numerics import compute_info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="pong-impala")
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="runs")
    ap.add_argument("--set", action="append", default=[], help="section.key=value overrides, as ddrl-lab run takes them")
    a = ap.parse_args()
    overrides = [f"run.out={a.out}", f"run.seed={a.seed}", *a.set]
    print(f"machine: {compute_info()}", flush=True)
    job = Job(a.preset, overrides).start()
    t0 = time.monotonic()
    try: job.wait(timeout=a.minutes * 60)
    finally: job.stop()
    df, k = job.metrics(), job.config.env.frame_skip     # frames per agent step
    print(f"run directory: {job.run_dir}  (preset {a.preset}, seed {a.seed}, status {job.status}; numerics {job.meta.get('numerics')})")
    print(f"{'minutes':>8} {'frames':>12} {'frames/s':>10} {'return (last 10)':>17} {'lag max':>8}")
    step = max(1, len(df) // 30)
    for _, r in df.iloc[::step].iterrows():
        print(f"{r.time_s / 60:8.1f} {k * r.env_steps:12,.0f} {k * r.env_steps_per_s:10,.0f} {r.episode_return_mean:17.2f} {r.version_lag_max:8.0f}")
    firsts = []
    for goal in (0, job.config.run.target_return):     # 0: issue #19's goal; the preset's target (18: #34's)
        hit = df[df.episode_return_mean >= goal]
        firsts.append(f"first >= {goal} at {hit.time_s.iloc[0] / 60:.1f} min, {k * hit.env_steps.iloc[0]:,.0f} frames"
                      if len(hit) else f"never >= {goal}")
    first = "mean of the last 10 returns " + "; ".join(firsts)
    wall = time.monotonic() - t0
    print(f"{k * df.env_steps.iloc[-1]:,} frames in {wall / 60:.1f} min: {k * df.env_steps.iloc[-1] / df.time_s.iloc[-1]:,.0f} frames/s "
          f"(training, mean); best {df.episode_return_mean.max():.2f}, final {df.episode_return_mean.iloc[-1]:.2f}; {first}")


if __name__ == "__main__":
    main()
