"""Time and env steps to solve CartPole-v1 (mean of the last 20 episode returns >= 475): the
on-device path (OnDevicePPO, preset cartpole-ondevice) against the decoupled Ray path (Job,
preset cartpole-ppo), side by side in one run, median of the seeds of each.

    .venv/bin/python bench/solve_ondevice.py [--seeds 1,2,3] [--skip-ray]

On-device: `time_to_target_s` is measured from the construction of OnDevicePPO (imports done)
to the end of the rollout in which the target was reached. Ray: the first row of
`job.metrics()` whose `episode_return_mean` reaches 475 gives `time_s` (from the start of the
driver loop: Ray and its actors are already up) and `env_steps`; rows come every
`run.log_interval_s`. The Ray path's whole wall time (Job construction to `wait()` returning,
Ray start-up included) is printed too.
"""
import argparse
import statistics
import tempfile
import time

from ddrl_lab import Job, load_config
from ddrl_lab.ondevice.actor_critic import OnDevicePPO

TARGET = 475.0


def ondevice(seed: int) -> dict:
    ppo = OnDevicePPO("cartpole-ondevice", {"run.seed": seed, "run.target_return": TARGET})
    r = ppo.train()
    return dict(time_s=r["time_to_target_s"], env_steps=r["steps_to_target"], wall_s=r["time_to_target_s"])


def ray_job(seed: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        job = Job(load_config("cartpole-ppo", {"run.out": d, "run.seed": seed}))
        try:
            job.start().wait()
            wall = time.perf_counter() - t0
            df = job.metrics()
        finally:
            job.stop()
    hit = df[df["episode_return_mean"] >= TARGET]
    if hit.empty: return dict(time_s=None, env_steps=None, wall_s=wall)
    return dict(time_s=float(hit["time_s"].iloc[0]), env_steps=int(hit["env_steps"].iloc[0]), wall_s=wall)


def med(rows: list, key: str):
    vals = [r[key] for r in rows]
    return None if any(v is None for v in vals) else statistics.median(vals)


def fmt(v, spec: str) -> str:
    return "not solved" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--skip-ray", action="store_true")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    paths = {"on-device (OnDevicePPO, cartpole-ondevice)": ondevice}
    if not args.skip_ray: paths["decoupled Ray (Job, cartpole-ppo)"] = ray_job
    results = {}
    for name, fn in paths.items():
        results[name] = []
        for s in seeds:
            r = fn(s)
            results[name].append(r)
            print(f"{name:44s} seed {s}: {fmt(r['time_s'], '7.2f')} s  {fmt(r['env_steps'], '>8,')} env steps"
                  f"  (wall {r['wall_s']:.1f} s)", flush=True)
    print(f"\n{'path':44s} {'median s':>9s} {'median steps':>13s} {'median wall s':>14s}")
    for name, rows in results.items():
        print(f"{name:44s} {fmt(med(rows, 'time_s'), '9.2f')} {fmt(med(rows, 'env_steps'), '13,.0f')} "
              f"{fmt(med(rows, 'wall_s'), '14.1f')}")
    if len(results) == 2:
        (_, a), (_, b) = results.items()
        ta, tb, wa, wb = med(a, "time_s"), med(b, "time_s"), med(a, "wall_s"), med(b, "wall_s")
        if ta and tb:
            print(f"\nRay / on-device: {tb / ta:.1f}x the time to 475 (median time_s), {wb / wa:.1f}x the wall time "
                  f"(Ray start-up included), {med(b, 'env_steps') / med(a, 'env_steps'):.2f}x the env steps")


if __name__ == "__main__":
    main()
