"""A replay shard full of Atari experience: 1 M transitions of 4x84x84 uint8 stacks, each frame stored once.

    .venv/bin/python bench/replay_atari_shard.py [--capacity 1000000] [--envs 8] [--length 32]

Fills one `ReplayShard` (prioritized, 3-step returns) with segments shaped like the Pong workers'
(M envs x T steps, frame stacks that move on by one frame per step, an episode reset now and then),
then prints what it holds: frames put per transition, the shard's own byte count, the growth of
this process's resident memory, the time to fill, and batches of 32 sampled per second with their
stacks (obs and boot_obs) rebuilt. The frames come from a pool of random frames, so that filling
costs copying rather than random-number generation. Needs about 8 GB of free memory at 1 M.
"""
import argparse
import time

import numpy as np
import psutil

from ddrl_lab.replay.shard import ReplayShard
from ddrl_lab.data.segments import Segment


def segments(n: int, T: int, M: int, reset_every: int = 2000, S: int = 4, seed: int = 0):
    "Pong-shaped segments: M env streams of frames drawn from a pool; a stream resets every ~`reset_every` steps."
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 256, (1024, 84, 84), np.uint8)
    pick = lambda: pool[rng.integers(len(pool))]
    stacks = [[pick()] * S for _ in range(M)]
    for q in range(n):
        obs = np.empty((T, M, S, 84, 84), np.uint8)
        te = rng.random((T, M)) < 1 / reset_every
        for t in range(T):
            for m in range(M):
                obs[t, m] = stacks[m]
                stacks[m] = [pick()] * S if te[t, m] else stacks[m][1:] + [pick()]
        yield Segment(obs=obs, actions=rng.integers(0, 6, (T, M)), logp=np.zeros((T, M), np.float32),
                      rewards=np.zeros((T, M), np.float32), terminated=te, truncated=np.zeros((T, M), bool),
                      next_obs=np.array(stacks), final_obs=np.zeros((0, S, 84, 84), np.uint8),
                      final_index=np.zeros(0, np.int64), policy_version=q, worker_id=0, seq=q, env_ids=tuple(range(M)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capacity", type=int, default=1_000_000)
    ap.add_argument("--envs", type=int, default=8)
    ap.add_argument("--length", type=int, default=32)
    a = ap.parse_args()
    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    shard = ReplayShard(capacity=a.capacity, n_step=3, seed=0)
    n = -(-a.capacity // (a.envs * a.length))
    t0 = time.perf_counter()
    for seg in segments(n, a.length, a.envs): shard.add(seg)
    fill_s = time.perf_counter() - t0
    m = shard.metrics()
    rss = proc.memory_info().rss - rss0
    t0, k = time.perf_counter(), 0
    while time.perf_counter() - t0 < 3.0:
        b = shard.sample(32); k += 1
    rate = k / (time.perf_counter() - t0)
    whole = a.capacity * 2 * 4 * 84 * 84
    print(f"{m['replay_size']:,} transitions held ({m['added']:,} added, {a.envs} envs x {a.length} steps per segment)")
    print(f"frames put per transition   {m['frames_stored'] / m['added']:.3f}")
    print(f"shard's bytes (replay_bytes) {m['replay_bytes'] / 1e9:.2f} GB   ({m['replay_bytes'] / m['replay_size']:,.0f} B per transition)")
    print(f"process resident growth     {rss / 1e9:.2f} GB")
    print(f"obs and boot_obs stored whole would take {whole / 1e9:.1f} GB (frames alone)")
    print(f"fill: {fill_s:.0f} s ({m['added'] / fill_s:,.0f} transitions/s); sample 32 with stacks rebuilt: {rate:,.0f} batches/s "
          f"({rate * 32:,.0f} transitions/s); ring grew {m['frame_ring_grows']}x; obs {b['obs'].shape} {b['obs'].dtype}")


if __name__ == "__main__":
    main()
