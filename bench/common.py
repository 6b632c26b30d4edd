"""Small helpers shared by the benchmark scripts (run them from the repository root: `.venv/bin/python bench/NAME.py`)."""
import os
import time

import psutil


def timed(step, batch: int, seconds: float, warmup: int = 3) -> float:
    "Calls `step(i)` until `seconds` pass (after `warmup` calls); returns items (`batch` per call) per second."
    for i in range(warmup): step(i)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step(n); n += 1
    return n * batch / (time.perf_counter() - t0)


def family() -> list:
    "Every descendant process of this one (a job's Ray workers and services included)."
    return psutil.Process(os.getpid()).children(recursive=True)


def rss_mb(procs=None) -> float:
    "Resident memory of this process and `procs` (default: its whole family), in MiB."
    total = psutil.Process(os.getpid()).memory_info().rss
    for p in family() if procs is None else procs:
        try: total += p.memory_info().rss
        except psutil.Error: pass
    return total / 2**20
