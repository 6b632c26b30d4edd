"""SEED-style on-device throughput, per device: the CPU, and CUDA when torch sees a GPU.

    .venv/bin/python bench/seed_gpu.py [--seconds 1.5] [--devices cpu,cuda] [--threads 1]

For each device it prints
  1. torch CartPole pool env steps/s with random actions (drawn on the device before timing),
     over a range of pool sizes (2^6..2^14 on CPU, 2^12..2^20 on CUDA);
  2. batched policy inference (forward of actor and critic + sampling), CartPole and Breakout
     models: latency p50/p99 of one call and throughput in samples/s;
  3. OnDevicePPO under training (rollout + GAE + PPO epochs, all on the device): learner
     updates/s and env steps/s, on CartPole and on TorchBreakout (MinAtar);
  4. the same training through the workbench: a Job of `topology.mode: on-device` (the DeviceLoop:
     rows, books, checkpoints around the same trainer), its env steps/s from its own metrics rows
     beside the bare loop's of (3);
  5. on CUDA, the peak device memory of each measurement.
Every timing synchronizes the device before reading the clock; latencies synchronize around
each call. The whole run takes about a minute on the CPU and well under 5 minutes with a GPU.
"""
import argparse
import time

import numpy as np
import torch

from ddrl_lab.config.load import load_config
from ddrl_lab.ondevice.actor_critic import BREAKOUT_OVERRIDES, OnDevicePPO
from ddrl_lab.nn.models import make_policy, sample_actions
from ddrl_lab.envs.torch_games import make_torch_pool

# Pool sizes and batch sizes per device type; on CUDA the big batches are where the GPU pays off.
ENV_SIZES = {"cpu": [2**6, 2**10, 2**14], "cuda": [2**12, 2**14, 2**16, 2**18, 2**20]}
INFER_BATCHES = {"cpu": [1, 64, 1024, 16384], "cuda": [1, 1024, 65536, 2**20]}
# OnDevicePPO settings under training: the tuned CPU preset, and a wide GPU variant.
CARTPOLE_TRAIN = {"cpu": {}, "cuda": {"env.num_envs": 8192, "algo.segment_length": 32, "algo.minibatch_size": 32768,
                                      "algo.epochs": 4}}
BREAKOUT_TRAIN = {"cpu": dict(BREAKOUT_OVERRIDES),
                  "cuda": {**BREAKOUT_OVERRIDES, "env.num_envs": 8192, "algo.minibatch_size": 32768, "algo.hidden_size": 256}}


def sync(dev: torch.device):
    if dev.type == "cuda": torch.cuda.synchronize(dev)


def reset_peak(dev: torch.device):
    if dev.type == "cuda":
        sync(dev); torch.cuda.reset_peak_memory_stats(dev)


def peak_mib(dev: torch.device) -> str:
    if dev.type != "cuda": return ""
    sync(dev)
    return f"{torch.cuda.max_memory_allocated(dev) / 2**20:,.0f} MiB"


def rate(step, items: int, seconds: float, dev: torch.device, warmup: int = 3) -> float:
    "Items per second of `step(i)` over `seconds` (after `warmup` calls); the device is synchronized at both ends."
    for i in range(warmup): step(i)
    sync(dev)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step(n); n += 1
    sync(dev)
    return n * items / (time.perf_counter() - t0)


def show(label: str, figure: str, mem: str = ""):
    print(f"{label:80s} {figure}" + (f"  peak {mem}" if mem else ""), flush=True)


def env_rates(dev: torch.device, seconds: float):
    for M in ENV_SIZES[dev.type]:
        reset_peak(dev)
        pool = make_torch_pool("CartPole-v1", M, device=dev)
        acts = torch.randint(0, 2, (16, M), device=dev, generator=torch.Generator(device=dev).manual_seed(0))
        r = rate(lambda i: pool.step(acts[i & 15]), M, seconds, dev)
        show(f"CartPole pool x{M:,}, random actions", f"{r:,.0f} env steps/s", peak_mib(dev))
        del pool, acts


def inference(dev: torch.device, seconds: float):
    for env_id, hidden in (("CartPole-v1", 64), ("Breakout-MinAtar-v0", 128)):
        pool = make_torch_pool(env_id, 1, device=dev)
        cfg = load_config("cartpole-ondevice", {"env.id": env_id, "algo.hidden_size": hidden})
        model = make_policy(
            cfg, pool.single_observation_space, pool.single_action_space, device=dev, seed=cfg.run.seed
        )
        gen = torch.Generator(device=dev).manual_seed(0)
        for B in INFER_BATCHES[dev.type]:
            reset_peak(dev)
            shape, space = (B, *pool.single_observation_space.shape), pool.single_observation_space
            obs = (torch.randint(0, 2, shape, device=dev, dtype=torch.uint8) if space.dtype == np.uint8
                   else torch.randn(shape, device=dev))

            @torch.no_grad()
            def act(_=None):
                logits, value = model.logits_value(obs)
                a, logp = sample_actions(logits, gen)
                return a, logp, value
            thr = rate(act, B, seconds, dev)
            lat, t_end = [], time.perf_counter() + seconds
            while time.perf_counter() < t_end or len(lat) < 20:
                sync(dev); t0 = time.perf_counter(); act(); sync(dev); lat.append(time.perf_counter() - t0)
            p50, p99 = np.percentile(lat, [50, 99]) * 1e3
            show(f"inference {env_id} h{hidden}, batch {B:,}",
                 f"p50 {p50:.3f} ms  p99 {p99:.3f} ms  {thr:,.0f} samples/s", peak_mib(dev))


def training(dev: torch.device, seconds: float, name: str, overrides: dict, threads: int):
    "Updates/s and env steps/s of OnDevicePPO on `dev` after two warm-up iterations."
    reset_peak(dev)
    ppo = OnDevicePPO("cartpole-ondevice", {**overrides, "topology.device": dev.type, "run.target_return": None},
                      num_threads=threads)
    for _ in range(2): ppo.iterate()
    sync(dev)
    u0, s0, t0 = ppo.updates, ppo.env_steps, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        ppo.iterate()
    sync(dev)
    dt = time.perf_counter() - t0
    c = ppo.cfg
    label = (f"PPO training {name} ({c.env.num_envs} envs x {c.algo.segment_length} steps, {c.algo.epochs} epochs "
             f"of {c.algo.minibatch_size}, h{c.algo.hidden_size})")
    show(label, f"{(ppo.updates - u0) / dt:,.1f} updates/s  {(ppo.env_steps - s0) / dt:,.0f} env steps/s "
                f"(return {ppo.return_mean():.1f})", peak_mib(dev))


def through_job(dev: torch.device, seconds: float, name: str, overrides: dict):
    "Env steps/s of the on-device topology run as a Job (`ddrl-lab run cartpole-ondevice --set topology.device=...`)."
    import tempfile
    from ddrl_lab.run.job import Job
    reset_peak(dev)
    with tempfile.TemporaryDirectory() as out:
        job = Job("cartpole-ondevice", {**overrides, "topology.device": dev.type, "run.target_return": None,
                                        "run.total_env_steps": 10**12, "run.log_interval_s": 0.5, "run.out": out}).start()
        try: job.wait(timeout=seconds + 2.0)
        finally: job.stop()
        df = job.metrics()
    late = df[df.time_s >= 1.0]                       # after the first second (start-up, first compiles)
    steps = (late.env_steps.iloc[-1] - late.env_steps.iloc[0]) / max(late.time_s.iloc[-1] - late.time_s.iloc[0], 1e-9) if len(late) > 1 else float("nan")
    show(f"PPO training {name} through Job (topology.mode on-device, {len(df)} rows)",
         f"{steps:,.0f} env steps/s  (return {df.episode_return_mean.iloc[-1]:.1f})", peak_mib(dev))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.5, help="timing window of each measurement")
    ap.add_argument("--devices", default="cpu,cuda", help="devices to measure; cuda is skipped when there is none")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    devices = [torch.device(d) for d in args.devices.split(",") if d != "cuda" or torch.cuda.is_available()]
    if "cuda" in args.devices and not torch.cuda.is_available(): print("CUDA: torch sees no GPU; measuring the CPU only")
    t_start = time.perf_counter()
    for dev in devices:
        name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"CPU, {torch.get_num_threads()} thread(s)"
        print(f"\n== {dev.type}: {name}, torch {torch.__version__}")
        env_rates(dev, args.seconds)
        inference(dev, args.seconds / 2)
        training(dev, 2 * args.seconds, "CartPole", CARTPOLE_TRAIN[dev.type], args.threads)
        training(dev, 2 * args.seconds, "Breakout-MinAtar", BREAKOUT_TRAIN[dev.type], args.threads)
        through_job(dev, 4 * args.seconds, "CartPole", CARTPOLE_TRAIN[dev.type])
        through_job(dev, 4 * args.seconds, "Breakout-MinAtar", BREAKOUT_TRAIN[dev.type])
    print(f"\n(total {time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
