"""Fault drills on a real Ray cluster: a worker killed mid-run is restarted by Ray and the run goes on."""
import time

import numpy as np

from ddrl_lab import Job


def test_killed_worker_restarts_and_throughput_recovers(tmp_path, ray_cluster):
    job = Job("cartpole-ppo", {"run.total_env_steps": 300_000, "run.log_interval_s": 0.5, "run.out": str(tmp_path)}).start()
    deadline = time.monotonic() + 90
    while len(job.metrics()) < 6 and time.monotonic() < deadline: time.sleep(0.2)
    before = float(np.median(job.metrics().env_steps_per_s.iloc[-3:]))
    killed_at = job.metrics().time_s.iloc[-1]
    job.inject("kill_worker", worker=0)
    job.wait()
    df = job.metrics()
    assert job.status == "finished" and df.episode_return_mean.iloc[-1] >= 475, df.episode_return_mean.max()
    assert df.worker_restarts.iloc[-1] == 1
    back = df[(df.time_s > killed_at) & (df.worker_restarts == 1)]
    recovered = back[back.env_steps_per_s >= 0.8 * before]
    assert len(recovered), (before, back[["time_s", "env_steps_per_s"]].head())
    print(f"steps/s before {before:.0f}; back to {recovered.env_steps_per_s.iloc[0]:.0f} "
          f"{recovered.time_s.iloc[0] - killed_at:.1f} s after the kill")
    assert recovered.time_s.iloc[0] - killed_at <= 10.0
    b = job.books
    assert b["produced"] == b["trained"] + b["rejected"] + b["dropped_stale"] + b["dropped_stop"]
    assert b["worker_restarts"] == 1 and b["lost_in_flight"] >= 1   # the segment in flight, and calls refused while it restarted
