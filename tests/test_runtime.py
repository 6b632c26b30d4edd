"""The same preset on the serial and the Ray runtime: both learn, identically, and stop cleanly."""
import _thread
import contextlib
import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from ddrl_lab import Job
from ddrl_lab.runlog.metrics import ROW_KEYS, clock_keys
from test_browser import _wait

SOLVE = {"run.total_env_steps": 150_000, "run.target_return": 475}


def _alive_actors(job):
    "The job's actors that Ray still reports ALIVE."
    from ray.util.state import list_actors
    ids = {a._actor_id.hex() for a in job._spawned}
    return [a for a in list_actors(filters=[("state", "=", "ALIVE")]) if a.actor_id in ids]


def _wait_gone(job, timeout=20):
    deadline = time.monotonic() + timeout
    while _alive_actors(job) and time.monotonic() < deadline: time.sleep(0.5)
    return _alive_actors(job)


def _spawned(job):
    job._spawned = list(job.runtime.actors)   # remember the handles: stop() forgets them
    return job


def _first_row(job):
    "Wait until the running job has written its first row of metrics (a TimeoutError after a minute without one)."
    _wait("the job's first row", lambda: len(job.metrics()) >= 1, 60, every=0.05)


def _interrupt_after_first_row(job):
    "Ctrl-C in the main thread once the job has written a row (or after a minute without one: the test fails then)."
    try:
        _first_row(job)
    finally:
        _thread.interrupt_main()


def last_checkpoint(job):
    return torch.load(sorted((job.run_dir / "checkpoints").glob("*.pt"))[-1], weights_only=False)


@pytest.mark.slow
def test_serial_and_ray_both_learn_cartpole_identically(tmp_path, ray_cluster):
    runs = {}
    for runtime in ("serial", "ray"):
        job = Job("cartpole-ppo", {**SOLVE, "run.runtime": runtime, "run.out": str(tmp_path)}).start().wait()
        df = job.metrics()
        assert job.status == "finished"
        assert set(ROW_KEYS) <= set(df.columns)
        assert df.episode_return_mean.iloc[-1] >= 475, (runtime, df.episode_return_mean.max())
        assert df.env_steps.iloc[-1] < 150_000
        assert (df.version_lag_max == 0).all() and (df.rejected_segments == 0).all()
        # each kind of process's resident memory in the rows (on Ray: asked of each actor); no GPU key on the CPU
        usage = {"serial": {"rss_mb_driver"}, "ray": {"rss_mb_driver", "rss_mb_learners", "rss_mb_workers"}}[runtime]
        assert {c for c in df.columns if c.startswith("rss_mb_")} == usage
        assert all((df[c].dropna() > 10).any() for c in usage), df[sorted(usage)].tail(2)
        assert not [c for c in df.columns if c.startswith("gpu_")]
        runs[runtime] = last_checkpoint(job)
    # Same seeds, same wiring: the Ray run is the serial run, update for update.
    assert runs["serial"]["version"] == runs["ray"]["version"]
    for k, v in runs["serial"]["model"].items():
        np.testing.assert_array_equal(v, runs["ray"]["model"][k])


def test_ray_stop_is_idempotent_and_leaves_no_actors(tmp_path, ray_cluster):
    job = _spawned(Job("cartpole-ppo", {"run.total_env_steps": 10**8, "run.target_return": None, "run.out": str(tmp_path)}).start())
    deadline = time.monotonic() + 60
    while len(job.metrics()) < 2 and time.monotonic() < deadline: time.sleep(0.2)
    assert len(job.metrics()) >= 2
    assert len(_alive_actors(job)) == 3            # one learner, two workers
    job.stop(); job.stop()
    assert job.status == "stopped"
    assert _wait_gone(job) == []
    assert ray_cluster.is_initialized()  # the shared cluster was not ours to shut down
    meta = json.loads((job.run_dir / "meta.json").read_text())
    assert meta["status"] == "stopped" and (job.run_dir / "report.html").exists()


def test_live_knob_reaches_the_ray_learner(tmp_path, ray_cluster):
    job = Job("cartpole-ppo", {"run.total_env_steps": 10**8, "run.target_return": None, "run.out": str(tmp_path),
                               "run.log_interval_s": 0}).start()
    try:
        job.update(lr=1e-5, epochs=3)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            df = job.metrics()
            if len(df) and df.knob_lr.iloc[-1] == 1e-5: break
            time.sleep(0.2)
        assert df.knob_lr.iloc[-1] == 1e-5 and df.knob_epochs.iloc[-1] == 3
        assert df.lr.iloc[-1] == 1e-5   # the learner actually stepped with it
    finally:
        job.stop()


def test_interrupt_during_wait_stops_the_job(tmp_path, ray_cluster):
    "What the notebook's 'interrupt kernel' does: KeyboardInterrupt in the main thread while wait() blocks."
    job = _spawned(Job("cartpole-ppo", {"run.total_env_steps": 10**8, "run.target_return": None, "run.out": str(tmp_path)}).start())
    # the interrupt comes once the job is running (its first row written), not after a fixed time
    threading.Thread(target=_interrupt_after_first_row, args=(job,), daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        job.wait()
    assert job.status == "stopped" and _wait_gone(job) == []


def test_exception_in_a_with_block_stops_the_job(tmp_path, ray_cluster):
    with pytest.raises(ZeroDivisionError):
        with Job("cartpole-ppo", {"run.total_env_steps": 10**8, "run.target_return": None, "run.out": str(tmp_path)}) as job:
            _spawned(job)
            _first_row(job)
            1 / 0
    assert job.status == "stopped" and _wait_gone(job) == []
    assert json.loads((job.run_dir / "meta.json").read_text())["status"] == "stopped"


def test_workers_are_added_and_removed_live_on_ray(tmp_path, ray_cluster):
    "num_workers is a live knob: a third Ray worker joins the running async job, then the job shrinks to one."
    job = _spawned(Job("cartpole-ppo", {"sync.mode": "async", "algo.minibatch_size": 128, "run.total_env_steps": 10**8,
                                        "run.target_return": None, "run.out": str(tmp_path)}).start())
    deadline = time.monotonic() + 60
    while len(job.metrics()) < 2 and time.monotonic() < deadline: time.sleep(0.2)
    job.update(num_workers=3)
    while job.produced_by_worker[2] < 3 and time.monotonic() < deadline + 60: time.sleep(0.2)
    assert job.produced_by_worker[2] >= 3, dict(job.produced_by_worker)
    job.update(num_workers=1)
    time.sleep(2.0)
    before = dict(job.produced_by_worker)
    time.sleep(3.0)
    after = dict(job.produced_by_worker)
    job.stop()
    assert after[0] > before[0] and after.get(1) == before.get(1) and after.get(2) == before.get(2)
    assert job.metrics().knob_num_workers.iloc[-1] == 1 and _wait_gone(job) == []
    b = job.books
    assert b["produced"] == b["trained"] + b["rejected"] + b["dropped_stale"] + b["dropped_stop"] + b["lost_with_learner"], dict(b)


def test_a_sync_ray_run_stopped_and_resumed_matches_an_uninterrupted_one(tmp_path, ray_cluster):
    "Barrier mode on Ray, 2 workers: stop mid-run, `Job.resume`, and every row (bar wall-clock figures) equals the uninterrupted run's."
    from ddrl_lab.runlog.metrics import read_metrics
    o = {"run.runtime": "ray", "topology.num_workers": 2, "run.total_env_steps": 12288, "run.target_return": None,
         "run.out": str(tmp_path), "run.log_interval_s": 0}
    whole = Job("cartpole-ppo", o, name="whole").start().wait()
    cut = Job("cartpole-ppo", o, name="cut").start()
    while len(cut.metrics()) < 20: time.sleep(0.01)
    cut.stop()
    stopped_at = int(cut.metrics().env_steps.iloc[-1])
    again = Job.resume(cut.run_dir).start().wait()
    assert (whole.status, again.status) == ("finished", "finished") and 0 < stopped_at < 12288
    a, b = read_metrics(whole.run_dir / "metrics.jsonl"), read_metrics(cut.run_dir / "metrics.jsonl")
    clock = clock_keys(a.columns)
    assert list(a.columns) == list(b.columns)
    assert a.drop(columns=clock).equals(b.drop(columns=clock))


def _is_loopback(ip: str) -> bool:
    import ipaddress
    a = ipaddress.ip_address(ip.split("%")[0])
    return a.is_loopback or (a.version == 6 and a.ipv4_mapped is not None and a.ipv4_mapped.is_loopback)


@pytest.mark.slow
def test_the_local_cluster_of_a_job_listens_on_loopback_only(tmp_path):
    """`ddrl-lab run` on Ray starts its own local cluster: every TCP socket that any of its processes (the driver,
    GCS, raylet, dashboard, agents, workers) listens on, and every UDP socket they bound, is on 127.0.0.1; token
    authentication is on in the cluster's processes."""
    import signal
    import subprocess
    import psutil
    from conftest import BIN
    out = tmp_path / "runs"
    p = subprocess.Popen([str(BIN / "ddrl-lab"), "run", "cartpole-ppo", "--out", str(out), "--set", "run.total_env_steps=100000000",
                          "--set", "run.target_return=null"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and p.poll() is None:
            found = list(out.glob("*/metrics.jsonl"))
            if found and found[0].read_text().count("\n") >= 2: break   # workers and learner up and running
            time.sleep(0.5)
        assert p.poll() is None, p.communicate()[1][-3000:]
        family = [psutil.Process(p.pid)] + psutil.Process(p.pid).children(recursive=True)
        names = {q.name() for q in family}
        assert {"gcs_server", "raylet"} <= names and any("RuntimeEnvAgent" in n or "DashboardAgent" in n for n in names), names
        listening, bound_udp = [], []
        for q in family:
            try: conns = q.net_connections(kind="inet")
            except psutil.NoSuchProcess: continue
            listening += [(c.laddr.ip, c.laddr.port, q.name()) for c in conns if c.type == 1 and c.status == psutil.CONN_LISTEN]
            bound_udp += [(c.laddr.ip, c.laddr.port, q.name()) for c in conns if c.type == 2 and c.laddr]
        servers = {n for _, _, n in listening}
        assert {"gcs_server", "raylet"} <= servers and len(listening) >= 8, listening   # the servers were seen at all
        outward = [s for s in listening + bound_udp if not _is_loopback(s[0])]
        assert not outward, f"listening beyond 127.0.0.1: {outward}"
        gcs = next(q for q in family if q.name() == "gcs_server")
        assert gcs.environ().get("RAY_AUTH_MODE") == "token", gcs.environ().get("RAY_AUTH_MODE")   # Ray's token auth, kept on
    finally:
        if p.poll() is None: p.send_signal(signal.SIGINT)
        try: p.communicate(timeout=60)
        except subprocess.TimeoutExpired: p.kill(); p.communicate()
    assert p.returncode == 130


@contextlib.contextmanager
def _ray_start(*node_args):
    """A cluster started with `ray start` on this machine, one node per entry of `node_args` (the first the head, each
    entry its extra flags), with token authentication on, as Ray 2.60 starts it. Yields the head's port, the environment
    without this session's RAY_ variables and the `ray start` processes; stops everything they started."""
    import os
    import signal
    import socket
    import subprocess
    import psutil
    from conftest import BIN
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    common = ["--block", "--disable-usage-stats"]
    procs = [subprocess.Popen([str(BIN / "ray"), "start", "--head", f"--port={port}", "--include-dashboard=false", *common,
                               *node_args[0]], env=env,
                              start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    family = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:               # up once its GCS listens on the port
            family = [psutil.Process(procs[0].pid)] + psutil.Process(procs[0].pid).children(recursive=True)
            if any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for q in family if q.name() == "gcs_server"
                   for c in q.net_connections(kind="tcp")):
                break
            time.sleep(0.5)
        else: raise AssertionError("the head node did not come up")
        for args in node_args[1:]:                       # the other nodes join it (they need the token too)
            procs.append(subprocess.Popen([str(BIN / "ray"), "start", f"--address=127.0.0.1:{port}", *common, *args],
                                          env={**env, "RAY_AUTH_MODE": "token"}, start_new_session=True,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(2)
        yield port, env, procs
    finally:                                             # stop what they started: their process groups, then any worker left
        for p in procs:
            try: family += [psutil.Process(p.pid)] + psutil.Process(p.pid).children(recursive=True)
            except psutil.NoSuchProcess: pass
        for p in procs:
            try: os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError: pass
        _, alive = psutil.wait_procs([q for q in set(family) if q.is_running()], timeout=3)   # `ray start` lingers on SIGTERM
        for q in alive: q.kill()
        from ray._common.utils import get_ray_address_file       # `ray start` left its address for any later ray.init()
        marker = Path(get_ray_address_file(None))
        if marker.exists() and marker.read_text().strip().endswith(f":{port}"): marker.unlink()


@pytest.mark.slow
def test_an_existing_cluster_too_small_or_unauthenticated_is_refused_at_once(tmp_path):
    """A cluster started with `ray start --head` (2 CPUs, token authentication on, as Ray 2.60 starts it): a job
    whose actors ask for 4 CPUs is refused before anything is spawned (exit 2, both numbers named, no run directory)
    instead of waiting forever; without RAY_AUTH_MODE=token the refusal says to set it. The cluster stays up."""
    import subprocess
    from conftest import BIN
    with _ray_start(["--num-cpus=2"]) as (port, env, (head,)):
        args = [str(BIN / "ddrl-lab"), "run", "cartpole-ppo", "--out", str(tmp_path / "runs"), "--set", "run.runtime=ray",
                "--set", f"run.ray_address=127.0.0.1:{port}", "--set", "topology.num_workers=3"]
        t0 = time.monotonic()
        r = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**env, "RAY_AUTH_MODE": "token"})
        assert r.returncode == 2 and time.monotonic() - t0 < 60, (r.returncode, r.stderr[-2000:])
        err = r.stderr.strip().splitlines()[-1]
        assert "ask for 4 CPUs (3 env workers at 1 each and 1 for the learner side)" in err and "2 of its 2 CPUs free" in err, err
        # no RAY_AUTH_MODE: the token is refused; Ray retries the refused GCS 3 times (1 s apart), not its default 20
        r = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**env, "RAY_NUM_REDIS_GET_RETRIES": "3"})
        assert r.returncode == 2 and "set RAY_AUTH_MODE=token" in r.stderr.strip().splitlines()[-1], r.stderr[-2000:]
        assert "Authentication token is missing or incorrect" in r.stderr, r.stderr[-2000:]   # refused for its token
        assert not (tmp_path / "runs").exists()
        assert head.poll() is None                       # the cluster is still up


_CLUSTER_PROBE = """import json, sys, time, ray
ray.init(address=sys.argv[1], log_to_driver=False)
deadline = time.monotonic() + 60
while len([n for n in ray.nodes() if n["Alive"]]) < int(sys.argv[2]) and time.monotonic() < deadline: time.sleep(0.5)
print(json.dumps(dict(nodes=len([n for n in ray.nodes() if n["Alive"]]), free_cpus=ray.available_resources().get("CPU", 0))))"""


@pytest.mark.slow
def test_a_job_on_a_two_node_cluster_ships_its_code_spreads_its_workers_and_leaves_the_cluster_up(tmp_path):
    """Two nodes started with `ray start` on this machine (token authentication on): `ddrl-lab run` with
    run.ray_address=127.0.0.1:PORT joins them, places its env workers on both nodes, runs in every actor the ddrl_lab it
    shipped through Ray's runtime environment (not this checkout) and the user's env module it shipped with it (a file in
    the folder it was run from, with env.kwargs), finishes, gives back every CPU and leaves both nodes
    running. (Ray 2.60 forms no multi-node cluster on loopback alone: a node joining one that keeps to 127.0.0.1 is
    refused, and without that setting it takes the machine's outward address; so these two nodes listen on that address.)"""
    import subprocess
    import sys
    from conftest import BIN, ROOT, write_user_env
    with _ray_start(["--num-cpus=2"], ["--num-cpus=2"]) as (port, env, procs):
        env = {**env, "RAY_AUTH_MODE": "token"}
        probe = lambda: json.loads(subprocess.run([sys.executable, "-c", _CLUSTER_PROBE, f"127.0.0.1:{port}", "2"], env=env,
                                                  capture_output=True, text=True, timeout=120).stdout.strip().splitlines()[-1])
        assert probe() == dict(nodes=2, free_cpus=4.0)
        env_id = write_user_env(tmp_path)                                          # a user's env module, not installed
        r = subprocess.run([str(BIN / "ddrl-lab"), "run", "cartpole-ppo", "--out", str(tmp_path / "runs"), "--set", "run.runtime=ray",
                            "--set", f"run.ray_address=127.0.0.1:{port}", "--set", "topology.num_workers=2",
                            "--set", f"env.id={env_id}", "--set", "env.kwargs={length: 7}",
                            "--set", "run.total_env_steps=4096", "--set", "run.target_return=null"],
                           capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path)   # (a worker's path starts
        assert r.returncode == 0, r.stderr[-3000:]                                   # at the driver's folder: not the checkout)
        meta = json.loads(next((tmp_path / "runs").glob("*/meta.json")).read_text())
        assert meta["status"] == "finished", meta
        last = json.loads(next((tmp_path / "runs").glob("*/metrics.jsonl")).read_text().splitlines()[-1])
        assert last["episode_return_mean"] == 7.0, last                            # the user's env, with its kwargs, on both nodes
        where = meta["placement"]
        assert len({w["node_id"] for w in where["workers"]}) == 2, where          # one env worker on each node
        for part in where["workers"] + where["learners"]:                           # the shipped code, not this checkout
            assert "py_modules" in part["code"] and Path(part["code"]) != ROOT / "ddrl_lab", part
        assert probe() == dict(nodes=2, free_cpus=4.0)                              # its actors gone, the cluster up
        assert all(p.poll() is None for p in procs)


@pytest.mark.slow
def test_a_study_on_a_two_node_cluster_places_its_trials_on_both_nodes(tmp_path, capsys):
    """`ddrl-lab study` (#65) with run.ray_address joins a two-node `ray start` cluster (4 CPUs a node): each trial of
    PPO on 2 Ray workers asks for 4 CPUs (its driver, 2 workers, the learner side) packed on one node, so two trials run at once, one
    on each node; every trial finishes and its meta.json names the node each of its actors ran on. Listed below."""
    import subprocess
    import sys
    from conftest import BIN
    with _ray_start(["--num-cpus=4"], ["--num-cpus=4"]) as (port, env, procs):
        env = {**env, "RAY_AUTH_MODE": "token"}
        probe = lambda: json.loads(subprocess.run([sys.executable, "-c", _CLUSTER_PROBE, f"127.0.0.1:{port}", "2"], env=env,
                                                  capture_output=True, text=True, timeout=120).stdout.strip().splitlines()[-1])
        assert probe() == dict(nodes=2, free_cpus=8.0)
        r = subprocess.run([str(BIN / "ddrl-lab"), "study", "cartpole-ppo", "--grid", "algo.lr=1e-3,3e-3", "--seeds", "2",
                            "--out", str(tmp_path), "--set", "run.runtime=ray", "--set", f"run.ray_address=127.0.0.1:{port}",
                            "--set", "run.total_env_steps=4096", "--set", "run.record_episode=0"],
                           capture_output=True, text=True, timeout=400, env=env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-3000:]
        metas = {p.parent.parent.name: json.loads(p.read_text()) for p in tmp_path.glob("study-*/runs/*/*/meta.json")}
        assert len(metas) == 4 and {m["status"] for m in metas.values()} == {"finished"}, (r.stdout[-3000:], r.stderr[-3000:])
        nodes = {name: {a["node_id"][:8] for a in m["placement"]["workers"] + m["placement"]["learners"]}
                 for name, m in metas.items()}
        with capsys.disabled():
            print("\nwhere each trial's actors ran:", json.dumps(nodes, default=sorted))
        assert all(len(n) == 1 for n in nodes.values()), nodes                  # a trial's group packed on one node
        assert len(set().union(*nodes.values())) == 2, nodes                    # the trials on both nodes
        assert probe() == dict(nodes=2, free_cpus=8.0)                          # every CPU given back, the cluster up
