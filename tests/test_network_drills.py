"""The network drills reach the transport: `net_delay` holds the weights on their way to a worker and its segments
on their way back (`loops.network`), while the worker and the learner compute as fast as ever. Under the barrier
the round time grows by the round trip and comes back after the drill; behind a channel the learner goes on with
the other worker's data, so the delayed worker's segments arrive many versions old: the version lag rises during
the drill and falls back after. Bad input is refused with the key."""
import numpy as np
import pytest

from ddrl_lab import Job
from ddrl_lab.config import ConfigError


def _phases(job, for_s: float) -> tuple:
    "The rows before the drill, during it (after its first half second) and after it (a second after its end)."
    df = job.metrics()
    (fired,) = job.meta["faults_fired"]
    t0 = float(df[df.env_steps >= fired["at_env_steps"]].time_s.iloc[0])
    before = df[df.time_s < t0 - 0.3]
    during = df[(df.time_s > t0 + 0.5) & (df.time_s < t0 + for_s)]
    after = df[df.time_s > t0 + for_s + 1.0]
    assert len(before) >= 3 and len(during) >= 2 and len(after) >= 3, (len(before), len(during), len(after))
    return before, during, after


def test_net_delay_lengthens_the_barrier_round_by_the_round_trip(tmp_path):
    job = Job("cartpole-ppo", {"run.runtime": "serial", "run.total_env_steps": 40_000, "run.target_return": None,
                               "run.log_interval_s": 0.25, "run.faults": ["16000:net_delay:1:0.2:2"],
                               "run.out": str(tmp_path)}).start().wait()
    assert job.status == "finished", job.meta.get("error")
    before, during, after = _phases(job, 2.0)
    wait = lambda rows: float(np.median(rows.barrier_wait_ms))
    # weights out and segments back, 0.2 s each way: the round waits for worker 1's round trip
    assert wait(during) >= 350 > 10 * max(wait(before), 1.0), (wait(before), wait(during))
    assert wait(after) <= 2 * wait(before) + 5, (wait(before), wait(after))


def test_net_delay_on_one_worker_raises_the_version_lag_behind_a_channel(tmp_path):
    job = Job("cartpole-impala", {"run.runtime": "serial", "run.total_env_steps": 150_000, "run.target_return": None,
                                  "sync.max_staleness": 1000, "run.log_interval_s": 0.25,
                                  "run.faults": ["20000:net_delay:1:0.3:2"], "run.out": str(tmp_path)}).start().wait()
    assert job.status == "finished", job.meta.get("error")
    before, during, after = _phases(job, 2.0)
    lag = lambda rows: int(rows.version_lag_max.max())
    assert lag(during) >= max(10, 5 * lag(before)), (lag(before), lag(during))
    assert lag(after) <= lag(before) + 2, (lag(before), lag(after))


def test_bad_network_drills_are_refused_with_the_key():
    with pytest.raises(ConfigError, match=r"run.faults\[0\] = '10:net_bandwidth:0:0': net_bandwidth of 0.0 bytes/s"):
        Job("cartpole-ppo", {"run.faults": ["10:net_bandwidth:0:0"]})
    with pytest.raises(ConfigError, match=r"the replay loop does not route its segments and weights"):
        Job("cartpole-dqn", {"run.faults": ["10:net_delay:*:0.1:5"]})
