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

from common import timed
from ddrl_lab.replay import PrioritizedSampler, RingStorage
from ddrl_lab.replay_shard import ReplayShard, ShardBalancer, merge_samples, stale_mass_experiment, transitions
from ddrl_lab.segments import Segment

ALPHA, BETA, N_STEP, GAMMA = 0.6, 0.4, 3, 0.99
T, M = 128, 64            # one segment: 8192 items


def segment(seed: int) -> Segment:
    "A CartPole-sized segment with some episode ends."
    rng = np.random.default_rng(seed)
    term, trunc = rng.random((T, M)) < 0.01, rng.random((T, M)) < 0.002
    index = np.flatnonzero(trunc & ~term)
    return Segment(obs=rng.normal(size=(T, M, 4)).astype(np.float32), actions=rng.integers(0, 2, (T, M)),
                   logp=np.zeros((T, M), np.float32), rewards=np.ones((T, M), np.float32), terminated=term, truncated=trunc,
                   next_obs=rng.normal(size=(M, 4)).astype(np.float32), final_obs=rng.normal(size=(len(index), 4)).astype(np.float32),
                   final_index=index, policy_version=seed, worker_id=0, seq=seed)


def filled_shards(num_shards: int, capacity: int, rng: np.random.Generator) -> list[ReplayShard]:
    "`num_shards` shards of `capacity // num_shards` slots, filled round-robin, with random priorities."
    per = capacity // num_shards
    shards = [ReplayShard(shard_id=s, capacity=per, alpha=ALPHA, beta=BETA, n_step=N_STEP, gamma=GAMMA, seed=s)
              for s in range(num_shards)]
    for k in range(-(-capacity // (T * M))): shards[k % num_shards].add(segment(k))
    for sh in shards:
        sh.update_priorities(np.arange(len(sh)), sh.storage.insert_index[:len(sh)], rng.exponential(1.0, len(sh)))
    return shards


def sharded_rate(shards: list[ReplayShard], batch: int, seconds: float, tds: np.ndarray, rebalance_every: int) -> float:
    bal = ShardBalancer(len(shards), rebalance_every=rebalance_every, seed=0)
    def step(i):
        if bal.due(i): bal.refresh([sh.mass() for sh in shards], i)
        parts = [shards[s].sample(c) for s, c in enumerate(bal.counts(batch)) if c]
        merged = merge_samples(parts, bal.shares, BETA)
        td, lo = tds[i % len(tds)], 0
        for p in parts:
            shards[int(p["shard_id"][0])].update_priorities(p["index"], p["insert_index"], td[lo:lo + len(p["index"])])
            lo += len(p["index"])
        assert len(merged["weights"]) == batch
    return timed(step, batch, seconds, warmup=5)


def single_rate(capacity: int, batch: int, seconds: float, tds: np.ndarray, rng: np.random.Generator) -> float:
    "One PrioritizedSampler and its RingStorage, filled like the shards."
    storage, sampler = RingStorage(capacity), PrioritizedSampler(capacity, ALPHA, BETA, seed=0)
    for k in range(-(-capacity // (T * M))):
        items = transitions(segment(k), N_STEP, GAMMA)
        versions = items.pop("policy_version")
        sampler.add(storage.add(items, versions), versions)
    sampler.update_priorities(np.arange(capacity), rng.exponential(1.0, capacity))
    def step(i):
        index, info = sampler.sample(batch)
        storage.get(index)
        sampler.update_priorities(index, tds[i % len(tds)])
    return timed(step, batch, seconds, warmup=5)


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
