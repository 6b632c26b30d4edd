"""Hot and cold replay side by side: one shard holding everything in memory against a small hot ring over a cold tier.

    .venv/bin/python bench/cold_replay.py [--capacity 100000] [--hot 0.2] [--envs 8] [--length 32] [--dir DIR]

Both shards take the same Pong-shaped segments (4x84x84 uint8 stacks moving on one frame per step, from
`bench/replay_atari_shard.py`) up to `capacity` transitions: (A) a prioritized shard of `capacity` slots in memory;
(B) a shard of `hot * capacity` slots over a cold tier of the rest in `--dir` (memory-mapped `.npy` files; default: a
temporary folder on this disk). Printed: the growth of this process's anonymous resident memory (`RssAnon`) while each fills, the bytes
each holds in memory and on disk, the time to fill, and batches of 32 sampled (stacks rebuilt) with their
priorities sent back, per second, with the share of each batch that came from the cold tier. Run on one machine,
one shard after the other; compare the ratios.
"""
import argparse
import gc
import shutil
import tempfile
import time

import numpy as np
import psutil
import torch

from replay_atari_shard import segments

from ddrl_lab.replay.shard import ReplayShard


def rss_mb(kind: str = "RssAnon") -> float:
    "This process's anonymous resident memory (pages of the memory maps are the page cache's: the kernel may drop them)."
    for line in open("/proc/self/status"):
        if line.startswith(kind + ":"):
            return int(line.split()[1]) / 1024
    return psutil.Process().memory_info().rss / 2**20


def measure(name: str, make, n_segments: int, T: int, M: int, batches: int = 300) -> dict:
    gc.collect()
    before = rss_mb()
    shard = make()
    t0 = time.perf_counter()
    for seg in segments(n_segments, T, M):
        shard.add(seg)
    fill_s = time.perf_counter() - t0
    grown = rss_mb() - before
    m = shard.metrics()
    t0, cold = time.perf_counter(), 0
    for _ in range(batches):
        b = shard.sample(32)
        cold += int((b["index"] < 0).sum())
        shard.update_priorities(b["index"], b["insert_index"], np.random.default_rng(0).random(32))
    rate = batches / (time.perf_counter() - t0)
    row = dict(shard=name, items=m["replay_items"] + m.get("cold_items", 0), fill_s=fill_s, rss_growth_mb=grown,
               bytes_in_memory=m["replay_bytes"], bytes_on_disk=m.get("cold_bytes", 0), batches_per_s=rate,
               cold_share=cold / (32 * batches))
    print(" ".join(f"{k}={v:,.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    del shard
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capacity", type=int, default=100_000)
    ap.add_argument("--hot", type=float, default=0.2)
    ap.add_argument("--envs", type=int, default=8)
    ap.add_argument("--length", type=int, default=32)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    print(f"CPU: {torch.backends.cpu.get_cpu_capability()}, bf16 native: {torch.ops.mkldnn._is_mkldnn_bf16_supported()}")
    n = a.capacity // (a.envs * a.length) + 1
    hot = int(a.capacity * a.hot)
    folder = a.dir or tempfile.mkdtemp(prefix="cold-replay-")
    try:
        measure("warm-up", lambda: ReplayShard(capacity=1000, n_step=3, seed=0, frames=True), 8, a.length, a.envs, 10)
        whole = measure("in memory", lambda: ReplayShard(capacity=a.capacity, n_step=3, seed=0, frames=True),
                        n, a.length, a.envs)
        tiered = measure("hot + cold", lambda: ReplayShard(capacity=hot, n_step=3, seed=0, frames=True,
                                                           cold_capacity=a.capacity - hot, cold_dir=folder),
                         n, a.length, a.envs)
    finally:
        if a.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"hot + cold / in memory: resident growth {tiered['rss_growth_mb'] / whole['rss_growth_mb']:.2f}x, "
          f"fill time {tiered['fill_s'] / whole['fill_s']:.2f}x, "
          f"batches/s {tiered['batches_per_s'] / whole['batches_per_s']:.2f}x")


if __name__ == "__main__":
    main()
