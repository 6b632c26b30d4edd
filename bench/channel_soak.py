"""Soak: a decoupled (async) PPO job on a local Ray cluster whose learner is ~10x slower than its
producers, run for minutes; memory is sampled side by side with the channel's fill and books.

    .venv/bin/python bench/channel_soak.py [--minutes 3] [--every 15]

Memory is the resident set of every process of the job (the driver, and the Ray workers and
services it started). Flat memory under sustained backpressure is the pass mark.
"""
import argparse
import time


from common import rss_mb
from ddrl_lab import Job


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--every", type=float, default=15.0)
    args = ap.parse_args()
    job = Job("cartpole-ppo", {"sync.mode": "async", "algo.epochs": 200, "sync.max_staleness": 10**6,
                               "run.total_env_steps": 10**9, "run.target_return": None, "run.out": "runs/soak"}).start()
    print(f"{'t_s':>6} {'rss_mb':>8} {'fill':>5} {'produced':>9} {'trained':>8} {'throttled_s':>12} {'env_steps/s':>12}")
    samples, t0 = [], time.monotonic()
    try:
        while time.monotonic() - t0 < args.minutes * 60:
            time.sleep(args.every)
            df = job.metrics()
            if not len(df): continue
            r = df.iloc[-1]
            rss = rss_mb()
            samples.append(rss)
            print(f"{time.monotonic() - t0:6.0f} {rss:8.0f} {r.channel_fill:5.2f} {int(r.produced_segments):9d} "
                  f"{int(r.trained_segments):8d} {r.throttled_s:12.1f} {r.env_steps / max(r.time_s, 1e-9):12.0f}", flush=True)
    finally:
        job.stop()
    b = job.books
    half = len(samples) // 2
    print(f"books: produced {b['produced']} = trained {b['trained']} + rejected {b['rejected']} + dropped_stale "
          f"{b['dropped_stale']} + dropped_stop {b['dropped_stop']}: "
          f"{'balanced' if b['produced'] == b['trained'] + b['rejected'] + b['dropped_stale'] + b['dropped_stop'] + b['lost_with_learner'] else 'NOT balanced'}")
    if half:
        print(f"memory: first half mean {sum(samples[:half]) / half:.0f} MB, second half mean "
              f"{sum(samples[half:]) / (len(samples) - half):.0f} MB, max {max(samples):.0f} MB")


if __name__ == "__main__":
    main()
