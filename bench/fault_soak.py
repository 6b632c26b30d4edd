"""Fault soak: a PPO job on a local Ray cluster (started by the job) with a worker killed every
minute, for many minutes. Samples the memory and the process count of the job's whole process
family side by side with its throughput and books; at the end checks that no process is left.

    .venv/bin/python bench/fault_soak.py [--minutes 20] [--kill-every 60] [--every 15]
"""
import argparse
import time
from collections import Counter

import psutil

from common import family, rss_mb
from ddrl_lab import Job


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--kill-every", type=float, default=60.0)
    ap.add_argument("--every", type=float, default=15.0)
    args = ap.parse_args()
    job = Job("cartpole-ppo", {"run.total_env_steps": 10**10, "run.target_return": None, "run.checkpoint_every": 200,
                               "run.out": "runs/fault_soak"}).start()
    print(f"{'t_s':>6} {'rss_mb':>8} {'procs':>6} {'restarts':>8} {'lost':>5} {'env_steps/s':>12} {'return':>7}", flush=True)
    t0, next_kill, kills, seen, samples, by_name = time.monotonic(), args.kill_every, 0, set(), [], []
    try:
        while time.monotonic() - t0 < args.minutes * 60:
            time.sleep(args.every)
            t = time.monotonic() - t0
            if t >= next_kill:
                job.inject("kill_worker", worker=kills % len(job.runners)); kills += 1; next_kill += args.kill_every
            procs = family(); seen.update(p.pid for p in procs)
            df = job.metrics()
            if not len(df): continue
            r = df.iloc[-1]
            m = rss_mb(procs); samples.append((t, m)); by_name.append(_by_name(procs))
            print(f"{t:6.0f} {m:8.0f} {len(procs):6d} {int(r.worker_restarts):8d} {int(r.lost_segments):5d} "
                  f"{r.env_steps_per_s:12.0f} {r.episode_return_mean:7.1f}", flush=True)
    finally:
        job.stop()
    time.sleep(5)
    left = [p for p in psutil.pids() if p in seen and psutil.pid_exists(p)
            and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    b = job.books
    print(f"kills {kills}, worker_restarts {b['worker_restarts']}, lost_in_flight {b['lost_in_flight']}")
    print(f"books: produced {b['produced']} = trained {b['trained']} + rejected {b['rejected']} + dropped {b['dropped_stale'] + b['dropped_stop']}"
          f" + lost_with_learner {b['lost_with_learner']}: "
          f"{'balanced' if b['produced'] == b['trained'] + b['rejected'] + b['dropped_stale'] + b['dropped_stop'] + b['lost_with_learner'] else 'NOT balanced'}")
    # A killed worker comes back as a fresh process that has not loaded torch yet: the total dips for a sample or
    # two. So each window's figure is its largest sample, and processes are compared from the 5-minute mark on.
    print("memory, largest sample in each 5-minute window: " + ", ".join(
        f"{int(w * 5)}-{int(w * 5 + 5)} min {max(m for (t, m) in samples if t // 300 == w):.0f} MB"
        for w in sorted({t // 300 for t, _ in samples})) + f"; processes of the job left after stop: {len(left)}")
    warm = next((i for i, (t, _) in enumerate(samples) if t >= 300), 0)
    first, last = by_name[warm], by_name[-1]
    growth = sorted(((last[k] - first.get(k, 0.0), k) for k in last), reverse=True)[:5]
    print(f"growth by process from {samples[warm][0] / 60:.0f} min to the end: "
          + ", ".join(f"{k} {d:+.0f} MB ({last[k]:.0f})" for d, k in growth))

def _by_name(procs) -> Counter:
    "Resident MiB per process name (Ray names its workers `ray::Class`, `ray::Class.method` while one runs), this process included as `driver`."
    out = Counter(driver=psutil.Process().memory_info().rss / 2**20)
    for p in procs:
        try: out[p.name().split(".")[0]] += p.memory_info().rss / 2**20
        except psutil.Error: pass
    return out


if __name__ == "__main__":
    main()
