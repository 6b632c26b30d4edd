"""Segment codecs side by side, as ratios against pickle5 measured in the same run.

    .venv/bin/python bench/segment_codecs.py [--seconds 2]

Two segment sizes: CartPole (T=32, M=8, obs 4 float32: ~8 kB of arrays) and Pong (T=32, M=8,
obs 4x84x84 uint8: ~7.5 MB). For each codec:

- in process: encode + decode + touch, in segments/s and MB/s of array data, CPU per segment
  (`time.process_time`), and the encoded size (`Encoded.nbytes`: frames plus shared memory);
- across a process boundary: the parent encodes and sends over a `multiprocessing` Pipe
  (`send_encoded`); a spawned child receives, decodes and touches every page of every array,
  then acks. At most 4 segments are in flight. Segments/s, and CPU per segment of both
  processes together; once with the pipe as it comes (64 kB buffer) and once with its buffer
  raised to 1 MB (`F_SETPIPE_SZ`; `Connection.recv_bytes` reads a big message one pipe-buffer
  at a time, allocating for the whole remainder on every read).

"Touch" reads one byte per 4 kB page, so that a mapping that was never faulted in is paid for,
without timing a full pass over the data. Default run: about 45 s.
"""
import argparse
import fcntl
import multiprocessing as mp
import time

import numpy as np

from ddrl_lab.bench.data import make_segment, touch
from ddrl_lab.data.codecs import CODECS, Codec, get_codec, recv_encoded, send_encoded, shm_blocks
from ddrl_lab.data.segments import Segment

WINDOW = 4   # segments in flight through the pipe
WARMUP = 3   # segments sent before the clock starts (the child imports, the pipe fills)
BIG_PIPE = 1 << 20   # bytes; Linux lets any user raise a pipe's buffer up to /proc/sys/fs/pipe-max-size (1 MB)


def in_process(codec: Codec, segs: list[Segment], seconds: float) -> tuple[float, float]:
    "Encode + decode + touch in a loop: (segments/s, CPU seconds per segment)."
    for s in segs: touch(codec.decode(codec.encode(s)))
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        touch(codec.decode(codec.encode(segs[n % len(segs)]))); n += 1
    return n / (time.perf_counter() - t0), (time.process_time() - c0) / n


def consumer(data, acks) -> None:
    "Child: receive, decode, touch, ack; on EOF report (segments after warm-up, CPU seconds they took)."
    n, c0 = 0, time.process_time()
    while True:
        try: enc = recv_encoded(data)
        except EOFError: break
        touch(get_codec(enc.codec).decode(enc))
        acks.send_bytes(b"")
        n += 1
        if n == WARMUP: c0 = time.process_time()
    acks.send((n - WARMUP, time.process_time() - c0))


def through_pipe(codec: Codec, segs: list[Segment], seconds: float, pipe_size: int = 0) -> tuple[float, float]:
    "Parent encodes and sends, a spawned child decodes: (segments/s, CPU seconds per segment, both processes)."
    ctx = mp.get_context("spawn")
    data_r, data_w = ctx.Pipe(duplex=False)
    if pipe_size: fcntl.fcntl(data_w.fileno(), fcntl.F_SETPIPE_SZ, pipe_size)
    acks_r, acks_w = ctx.Pipe(duplex=False)
    child = ctx.Process(target=consumer, args=(data_r, acks_w), daemon=True)
    child.start(); data_r.close(); acks_w.close()
    for i in range(WARMUP): send_encoded(data_w, codec.encode(segs[i % len(segs)]))
    for _ in range(WARMUP): acks_r.recv_bytes()
    sent = acked = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        send_encoded(data_w, codec.encode(segs[sent % len(segs)])); sent += 1
        while sent - acked >= WINDOW: acks_r.recv_bytes(); acked += 1
    while acked < sent: acks_r.recv_bytes(); acked += 1
    rate, parent_cpu = sent / (time.perf_counter() - t0), time.process_time() - c0
    data_w.close()
    n, child_cpu = acks_r.recv()
    child.join(10)
    assert n == sent, (n, sent)
    return rate, (parent_cpu + child_cpu) / sent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.5, help="per measurement; 18 measurements in all")
    args = ap.parse_args()
    before = set(shm_blocks())
    rows = []
    for kind in ("CartPole", "Pong"):
        segs = [make_segment(kind, seed) for seed in range(4)]
        mb = segs[0].nbytes / 1e6
        for name in CODECS:
            codec = get_codec(name)
            size = codec.encode(segs[0]); codec.discard(size)
            rate, cpu = in_process(codec, segs, args.seconds)
            pipe_rate, pipe_cpu = through_pipe(codec, segs, args.seconds)
            big_rate, big_cpu = through_pipe(codec, segs, args.seconds, BIG_PIPE)
            rows.append((kind, name, rate, rate * mb, cpu, size.nbytes, pipe_rate, pipe_cpu, big_rate, big_cpu))
            print(f"  {kind:8s} {name:8s} done", flush=True)
    leaked = set(shm_blocks()) - before
    if leaked: print(f"LEAKED shared-memory blocks: {sorted(leaked)}")

    base = {r[0]: (r[2], r[6], r[8]) for r in rows if r[1] == "pickle5"}
    print(f"\n{'':19s}{'------------ encode + decode, one process ------------':>56s}"
          f"  {'--- pipe, 64 kB buffer ----':>30s}  {'---- pipe, 1 MB buffer ----':>30s}")
    print(f"{'segment':9s} {'codec':8s} {'seg/s':>10s} {'MB/s':>8s} {'x pickle5':>10s} {'CPU us/seg':>11s} {'encoded B':>12s}"
          + f"  {'seg/s':>7s} {'x pickle5':>10s} {'CPU us/seg':>11s}" * 2)
    for kind, name, rate, mbs, cpu, nbytes, pipe_rate, pipe_cpu, big_rate, big_cpu in rows:
        print(f"{kind:9s} {name:8s} {rate:10,.0f} {mbs:8,.0f} {rate / base[kind][0]:9.2f}x {cpu * 1e6:11,.0f} {nbytes:12,d}"
              f"  {pipe_rate:7,.0f} {pipe_rate / base[kind][1]:9.2f}x {pipe_cpu * 1e6:11,.0f}"
              f"  {big_rate:7,.0f} {big_rate / base[kind][2]:9.2f}x {big_cpu * 1e6:11,.0f}")
    print("\nMB/s counts the segment's array bytes. Pipe CPU is parent + child. encoded B for shm is header + block.")


if __name__ == "__main__":
    main()
