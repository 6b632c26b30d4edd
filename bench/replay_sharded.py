"""Sharded prioritized replay in one process: 1, 2 and 4 `ReplayShard`s against one sampler, and what stale shard masses cost.

    .venv/bin/python bench/replay_sharded.py [--capacity 1048576] [--batch 256] [--seconds 3] [--rebalance-every 1000] [--updates 2000]

Throughput rows are replayed transitions per second, a priority update for the whole batch
included, with `capacity` slots in total (split evenly over the shards), every slot filled with
CartPole-sized n-step items (obs of 4 float32, n = 3) and random priorities. The baseline is one
`PrioritizedSampler` with its `RingStorage`: `sample`, `get`, `update_priorities`. A sharded step
is what a driver does with its shards: refresh the masses when due (`ShardBalancer`), allocate
the batch, sample each shard, `merge_samples` (weights for the sharded draw), and send each
shard its TD errors (`update_priorities` with the insert-index check). Here the shards are
sampled one after another in one process; as Ray actors they would run in parallel, each behind a
round trip. The process is pinned to one CPU and BLAS to one thread.

Then the mean total-variation distance between sharded sampling with stale masses and global
prioritized sampling, for `rebalance_every` in 1, 10, 100, 1000 (`stale_mass_experiment`: 4
shards, batch 256; from a cold start, and after 500 warm-up updates). Default run: about 40 s.
"""
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"): os.environ.setdefault(var, "1")

import argparse
import time

import numpy as np

from ddrl_lab.bench.harness import items_per_s
from ddrl_lab.bench.data import N_STEP, filled_shards, sharded_step, single_sampler_step
from ddrl_lab.replay.sampling import stale_mass_experiment


def sharded_rate(shards, batch: int, seconds: float, tds: np.ndarray, rebalance_every: int) -> float:
    return items_per_s(sharded_step(shards, batch, tds, rebalance_every), batch, seconds, warmup=5)


def single_rate(capacity: int, batch: int, seconds: float, tds: np.ndarray, rng: np.random.Generator) -> float:
    "One PrioritizedSampler and its RingStorage, filled like the shards."
    return items_per_s(single_sampler_step(capacity, batch, tds, rng), batch, seconds, warmup=5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capacity", type=int, default=1 << 20)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rebalance-every", type=int, default=1000)
    ap.add_argument("--updates", type=int, default=2000, help="learner updates measured in the TV-distance experiment")
    a = ap.parse_args()
    if hasattr(os, "sched_setaffinity"): os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rng = np.random.default_rng(0)
    tds = rng.exponential(1.0, (64, a.batch))

    rows = {"PrioritizedSampler + RingStorage": single_rate(a.capacity, a.batch, a.seconds, tds, rng)}
    for S in (1, 2, 4):
        shards = filled_shards(S, a.capacity, rng)
        rows[f"ReplayShard x{S} (in process)"] = sharded_rate(shards, a.batch, a.seconds, tds, a.rebalance_every)
        del shards
    base = rows["PrioritizedSampler + RingStorage"]
    print(f"capacity {a.capacity:,} in total, batch {a.batch}, n-step {N_STEP}, rebalance_every {a.rebalance_every}, one core; "
          "replayed transitions/s, the batch's priority update included")
    print(f"{'':36s} {'transitions/s':>14s} {'vs one sampler':>15s}")
    for name, rate in rows.items(): print(f"{name:36s} {rate:14,.0f} {rate / base:14.2f}x")

    t0 = time.perf_counter()
    cold = stale_mass_experiment(updates=a.updates)
    warm = stale_mass_experiment(updates=a.updates, warmup=500)
    print(f"\nmean TV distance, sharded (stale masses) vs global prioritized sampling; 4 shards, batch 256, "
          f"{a.updates} updates ({time.perf_counter() - t0:.0f} s)")
    print(f"{'rebalance_every':>15s}  {'cold start':>10s}  {'after 500 updates':>17s}")
    for period in cold: print(f"{period:15d}  {cold[period]:10.4f}  {warm[period]:17.4f}")


if __name__ == "__main__":
    main()
