"""Prioritized replay at 1 M slots, side by side with plain NumPy, in one run on one core.

    .venv/bin/python bench/replay.py [--capacity 1048576] [--batch 256] [--seconds 3]

Every row is sampled transitions per second, a priority update for the whole batch included:
`sample(batch)` then `update_priorities(index, td)` with TD errors drawn before timing. The
sampler starts full, with random priorities. The baseline is what one writes without a
sum-tree: normalize the priorities, `rng.choice(capacity, batch, p=probs)`, importance weights
from the probabilities, and write the new priorities back (O(capacity) per batch). The process
is pinned to one CPU and BLAS to one thread. (What a shard's frame dedup saves on Atari is
`bench/replay_atari_shard.py`.) Default run: about 20 s.
"""
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"): os.environ.setdefault(var, "1")

import argparse

import numpy as np

from ddrl_lab.bench.harness import items_per_s
from ddrl_lab.bench.data import ALPHA, BETA, EPS, full_sampler, numpy_prioritized, sampler_rate
from ddrl_lab.replay.core import PrioritizedSampler, UniformSampler


def numpy_rate(capacity: int, batch: int, seconds: float, tds: np.ndarray, rng: np.random.Generator) -> float:
    "Prioritized sampling with `rng.choice(p=...)` on a flat array of priorities."
    return items_per_s(numpy_prioritized(capacity, batch, tds, rng), batch, seconds, warmup=5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capacity", type=int, default=1 << 20)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=3.0)
    a = ap.parse_args()
    if hasattr(os, "sched_setaffinity"): os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rng = np.random.default_rng(0)
    tds = rng.exponential(1.0, (64, a.batch))

    rows = {}
    rows["NumPy rng.choice(p=...) + update"] = numpy_rate(a.capacity, a.batch, a.seconds, tds, rng)
    rows["PrioritizedSampler sample + update"] = sampler_rate(
        full_sampler(PrioritizedSampler(a.capacity, ALPHA, BETA, EPS, seed=0), a.capacity, rng), a.batch, a.seconds, tds)
    rows["PrioritizedSampler + recency"] = sampler_rate(
        full_sampler(PrioritizedSampler(a.capacity, ALPHA, BETA, EPS, recency_half_life=20, seed=0), a.capacity, rng),
        a.batch, a.seconds, tds)
    rows["UniformSampler + recency"] = sampler_rate(
        full_sampler(UniformSampler(a.capacity, recency_half_life=20, seed=0), a.capacity, rng), a.batch, a.seconds, tds)
    rows["UniformSampler"] = sampler_rate(
        full_sampler(UniformSampler(a.capacity, seed=0), a.capacity, rng), a.batch, a.seconds, tds)

    base = rows["NumPy rng.choice(p=...) + update"]
    print(f"capacity {a.capacity:,}, batch {a.batch}, one core; sampled transitions/s, the batch's priority update included")
    print(f"{'':36s} {'transitions/s':>14s} {'vs NumPy':>9s}")
    for name, rate in rows.items(): print(f"{name:36s} {rate:14,.0f} {rate / base:8.1f}x")

if __name__ == "__main__":
    main()
