"""Every call's time, in seconds, as Prometheus histograms: against a real scrape of running jobs, PromQL's
`histogram_quantile(0.99, sum(rate(ddrl_inference_latency_seconds_bucket[5m])) by (le))` (computed here as
Prometheus does) lands within one bucket of the same quantile of the call times the job recorded, over the whole
run and over a window between two scrapes; the weight-sync and learner-update histograms count every call."""
import time
import urllib.request

import numpy as np
import pytest

from ddrl_lab import Job
from ddrl_lab.runlog.call_times import CALL_BUCKETS_S, histogram_quantile
from ddrl_lab.run.prometheus import MetricsServer, parse_prometheus


def _scrape(server, name: str) -> dict:
    "The cumulative buckets of histogram `name` in a scrape: {upper bound: count}."
    m = parse_prometheus(urllib.request.urlopen(server.url, timeout=10).read().decode())
    return {float(k.split('le="')[1].split('"')[0]): v for k, v in m.items() if k.startswith(f"{name}_bucket{{")}


def _within_a_bucket(estimate: float, truth: float) -> bool:
    return abs(int(np.searchsorted(CALL_BUCKETS_S, estimate)) - int(np.searchsorted(CALL_BUCKETS_S, truth))) <= 1


def test_inference_latency_quantiles_from_a_scrape_match_the_recorded_calls(tmp_path):
    job = Job("cartpole-central", {"run.runtime": "serial", "run.total_env_steps": 60_000, "run.target_return": None,
                                   "run.log_interval_s": 0.1, "run.out": str(tmp_path)}).start()
    name, calls = "ddrl_inference_latency_seconds", job.call_times
    with MetricsServer(job) as server:
        deadline = time.monotonic() + 60
        while calls.count("inference_latency_seconds") < 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        first = _scrape(server, name)
        while calls.count("inference_latency_seconds") < first[float("inf")] + 500 and job.status == "running":
            time.sleep(0.05)
        second = _scrape(server, name)
        job.wait()
        final = _scrape(server, name)
    recorded = np.asarray(calls.recent["inference_latency_seconds"])
    assert final[float("inf")] == len(recorded) > 700
    # the whole run
    for q in (0.5, 0.99):
        est, truth = histogram_quantile(q, final), float(np.quantile(recorded, q))
        assert _within_a_bucket(est, truth), (q, est, truth)
    # a window between two scrapes: the rate of each bucket over it (the guide's `rate(...[5m])`)
    dt = 300.0
    rate = {le: (second[le] - first[le]) / dt for le in second}
    window = recorded[int(first[float("inf")]):int(second[float("inf")])]
    assert len(window) >= 400
    est, truth = histogram_quantile(0.99, rate), float(np.quantile(window, 0.99))
    assert _within_a_bucket(est, truth), (est, truth)
    print(f"p99 inference latency: scrape {est * 1e3:.2f} ms, recorded {truth * 1e3:.2f} ms over {len(window)} calls")


@pytest.mark.parametrize("call", ["weight_sync_seconds", "learner_update_seconds"])
def test_every_weight_sync_and_update_is_observed(call, tmp_path):
    job = Job("cartpole-impala", {"run.runtime": "serial", "topology.num_learners": 2, "run.total_env_steps": 8192,
                                  "run.target_return": None, "run.out": str(tmp_path)}).start()
    with MetricsServer(job) as server:
        job.wait()
        buckets = _scrape(server, f"ddrl_{call}")
    recorded = np.asarray(job.call_times.recent[call])
    assert buckets[float("inf")] == len(recorded) > 0
    if call == "learner_update_seconds":
        assert len(recorded) >= job.metrics().learner_updates.iloc[-1]
    assert _within_a_bucket(histogram_quantile(0.99, buckets), float(np.quantile(recorded, 0.99)))
