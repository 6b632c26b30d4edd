"""The `ddrl-lab` command as a user runs it: real subprocesses, real exit codes, real files."""
import json
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from conftest import BIN

CLI = str(BIN / "ddrl-lab")


def run_cli(*args, env=None, timeout=120):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_presets_lists_names_and_descriptions():
    r = run_cli("presets")
    assert r.returncode == 0
    listed = dict(line.split(maxsplit=1) for line in r.stdout.splitlines())
    assert {"cartpole-ppo", "cartpole-impala", "cartpole-dqn", "cartpole-soft", "pong-ppo", "pong-ppo-fast", "pong-impala", "minatar-breakout"} <= set(listed)
    game = {"cartpole": "CartPole", "pong": "Pong", "minatar": "MinAtar",       # each one-liner names its game
            "stateless": "StatelessCartPole", "repeat": "RepeatPrevious", "pendulum": "Pendulum-v1",
            "halfcheetah": "HalfCheetah-v5"}
    assert all(game[name.split("-")[0]] in desc for name, desc in listed.items()), listed


def test_config_lists_every_key_of_the_dataclasses_with_its_help():
    import dataclasses
    from ddrl_lab.config.schema import SECTIONS

    r = run_cli("config", "cartpole-ppo", "--set", "algo.lr=1e-3")
    assert r.returncode == 0, r.stderr
    rows = [line[2:].split(maxsplit=1) for line in r.stdout.splitlines() if line[:2] in ("* ", "  ")]
    listed = [key for key, _ in rows]
    assert listed == [f"{s}.{f.name}" for s, cls in SECTIONS.items() for f in dataclasses.fields(cls)]
    shown = dict(rows)
    assert shown["algo.lr"].startswith("0.001  (default 0.0003; > 0.0, <= 1.0)  learning rate"), shown["algo.lr"]
    assert "\n* algo.lr " in r.stdout and "\n  env.seed " in r.stdout      # * marks what differs from the default


@pytest.mark.slow
def test_an_env_module_of_the_users_with_kwargs_runs_from_the_folder_it_is_in(tmp_path):
    "`env.id = module:EnvId` finds a file in the current folder without installing it; env.kwargs reach its constructor."
    from conftest import write_user_env
    env_id = write_user_env(tmp_path)
    r = subprocess.run([CLI, "run", "cartpole-ppo", "--set", f"env.id={env_id}", "--set", "env.kwargs={length: 7}",
                        "--set", "run.total_env_steps=2048", "--set", "run.target_return=null", "--quiet", "--out", "runs"],
                       capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = [json.loads(line) for line in (tmp_path / r.stdout.strip().splitlines()[-1] / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["episode_return_mean"] == 7.0, rows[-1]                     # every episode 7 steps of reward 1


BAD_INPUTS = {
    "unknown value": (["cartpole-ppo", "--set", "sync.mode=bogus"], ["sync.mode", "'bogus'", "sync, async, soft"]),
    "unknown key": (["cartpole-ppo", "--set", "replay.capacty=10"], ["replay.capacty", "did you mean 'capacity'"]),
    "wrong type": (["cartpole-ppo", "--set", "topology.num_workers=four"], ["topology.num_workers", "'four'", "an integer"]),
    "out of range": (["cartpole-ppo", "--set", "channel.high_watermark=1.5"], ["channel.high_watermark", "1.5", "at most 1.0"]),
    "contradiction": (["cartpole-ppo", "--set", "channel.low_watermark=0.95"], ["channel.low_watermark", "0.95", "below channel.high_watermark"]),
    "unknown preset": (["cartpole-dqn-nope"], ["unknown preset 'cartpole-dqn-nope'", "cartpole-ppo"]),
    "valid but not runnable": (["cartpole-ppo", "--set", "sync.mode=soft", "--set", "sync.aggregation=hybrid"],
                               ["sync.aggregation", "'hybrid'", "sync.mode = 'soft'"]),
    "unknown env": (["cartpole-ppo", "--set", "env.id=CartPole-v7"], ["env.id", "'CartPole-v7'", "did you mean 'CartPole-v1'"]),
    "env kwargs the env does not take": (["cartpole-ppo", "--set", "env.kwargs={lenght: 7}"],
                                         ["env.id = 'CartPole-v1' with env.kwargs = {'lenght': 7}", "could not be made", "lenght"]),
    "env kwargs on ale": (["pong-ppo", "--set", "env.kwargs={mode: 1}"], ["env.kwargs = {'mode': 1}", "'gymnasium' only", "'ale'"]),
    "drill on no such worker": (["cartpole-ppo", "--set", "run.faults=['100:kill_worker:2']"],
                                ["run.faults[0] = '100:kill_worker:2'", "this job has 2 workers, expected an index in 0..1"]),
    "drill on no such shard": (["cartpole-dqn", "--set", "run.faults=['100:kill_replay_shard:5']"],
                               ["kill_replay_shard on shard 5", "this job has 2 shards, expected an index in 0..1"]),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_exits_2_with_one_paragraph_and_no_run_dir(case, tmp_path):
    args, needles = BAD_INPUTS[case]
    out = tmp_path / "runs"
    r = run_cli("run", *args, "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)
    assert not out.exists()


def test_yaml_that_does_not_parse(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("env:\n  id: CartPole-v1\n  num_envs: [4\n")
    r = run_cli("run", str(bad), "--out", str(tmp_path / "runs"))
    assert r.returncode == 2 and "is not valid YAML at line" in r.stderr and str(bad) in r.stderr
    assert not (tmp_path / "runs").exists()


BAD_FILES = {      # name: (what the file holds, or None for no file; words the error must contain besides the path)
    "top-level list": (b"- a\n- b\n", ["holds a list at the top level", "expected a mapping of config sections"]),
    "top-level scalar": (b"5\n", ["holds the single value 5 at the top level", "expected a mapping"]),
    "top-level string": (b"just some words\n", ["holds the single value 'just some words'", "expected a mapping"]),
    "section a number": (b"env: 5\nrun: {total_env_steps: 64}\n", ["section 'env' must be a mapping", "got 5"]),
    "section a list": (b"env: [1, 2]\n", ["section 'env' must be a mapping", "got [1, 2]"]),
    "section empty list": (b"run: []\n", ["section 'run' must be a mapping", "got []"]),
    "value a list": (b"env: {id: [1, 2]}\n", ["env.id = [1, 2] has the wrong type", "expected a string"]),
    "value a mapping": (b"env: {num_envs: {a: 1}}\n", ["env.num_envs", "has the wrong type", "expected an integer"]),
    "value NaN": (b"algo: {lr: .nan}\n", ["algo.lr = nan", "not NaN"]),
    "duplicate section": (b"env: {id: CartPole-v1}\nrun: {seed: 1}\nenv: {num_envs: 2}\n",
                          ["at line 3", "the key 'env' appears twice", "first at line 1", "expected each key once"]),
    "duplicate key": (b"algo:\n  lr: 0.001\n  lr: 0.1\n", ["at line 3", "the key 'lr' appears twice", "first at line 2"]),
    "binary garbage": (bytes(range(255, 127, -1)) * 4, ["is not a YAML text file", "byte 0xff at offset 0 is not UTF-8"]),
    "control characters": (b"env:\x00\x01\x02\n", ["is not a YAML text file", "control character #x0000"]),
    "empty file": (b"", ["is empty", "expected a mapping of config sections"]),
    "only comments": (b"# a config to come\n", ["is empty (or holds only comments)"]),
    "two documents": (b"env: {}\n---\nrun: {}\n", ["is not valid YAML", "expected a single document"]),
    "python tag": (b"env: !!python/object:os.system {}\n", ["is not valid YAML", "could not determine a constructor"]),
    "missing file": (None, ["does not exist", "expected a YAML config file or a preset name"]),
    "directory": ("dir", ["is a directory", "expected a YAML config file or a preset name"]),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_config_file_exits_2_naming_the_file(case, tmp_path):
    "Any shape of bad file: exit 2, one line naming the file and what was expected, no traceback, no run directory."
    content, needles = BAD_FILES[case]
    path = tmp_path / "mine.yaml"
    if content == "dir": path.mkdir()
    elif content is not None: path.write_bytes(content)
    out = tmp_path / "runs"
    r = run_cli("run", str(path), "--out", str(out))
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.startswith("ddrl-lab: 1 problem in the config"), r.stderr
    for needle in [str(path), *needles]:
        assert needle in r.stderr, (needle, r.stderr)
    assert not out.exists()


def test_every_problem_in_one_error(tmp_path):
    r = run_cli("run", "cartpole-ppo", "--set", "sync.mode=bogus", "--set", "env.num_envs=0", "--set", "algo.lr=fast")
    assert r.returncode == 2 and "3 problems in the config" in r.stderr
    assert all(k in r.stderr for k in ("sync.mode", "env.num_envs", "algo.lr"))


def test_yaml_file_run(tmp_path):
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("env: {num_envs: 2}\nalgo: {segment_length: 16, minibatch_size: 32}\nrun: {runtime: serial, total_env_steps: 256}\n")
    r = run_cli("run", str(cfg), "--quiet", "--out", str(tmp_path / "runs"))
    assert r.returncode == 0, r.stderr
    run_dir = Path(r.stdout.strip())
    assert run_dir.name.startswith("mine-") and json.loads((run_dir / "meta.json").read_text())["status"] == "finished"


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_leaves_no_processes(tmp_path):
    "SIGINT during a Ray run: exit 130, records written, and Ray's processes (its own local cluster) gone."
    out = tmp_path / "runs"
    p = subprocess.Popen([CLI, "run", "cartpole-ppo", "--out", str(out), "--set", "run.total_env_steps=100000000",
                          "--set", "run.target_return=null"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        metrics = None
        while time.monotonic() < deadline:
            found = list(out.glob("*/metrics.jsonl"))
            if found and found[0].read_text().count("\n") >= 2:
                metrics = found[0]; break
            time.sleep(0.5)
        assert metrics is not None, "the run never produced metrics"
        family = psutil.Process(p.pid).children(recursive=True)
        assert any("raylet" in " ".join(c.cmdline()) for c in family if c.is_running()), "expected a local Ray cluster"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None: p.kill()
    assert p.returncode == 130, err
    meta = json.loads((metrics.parent / "meta.json").read_text())
    assert meta["status"] == "stopped" and meta["end"]
    assert (metrics.parent / "report.html").exists() and list((metrics.parent / "checkpoints").glob("*.pt"))
    _, alive = psutil.wait_procs(family, timeout=30)
    alive = [c for c in alive if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not alive, [" ".join(c.cmdline())[:80] for c in alive]


def test_help_names_every_command():
    "`ddrl-lab --help` prints every command with its one line (a `%` in one of them broke argparse's help once)."
    from ddrl_lab.cli import build_parser
    import argparse
    r = run_cli("--help")
    assert r.returncode == 0, r.stderr[-2000:]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert all(name in r.stdout for name in sub.choices), r.stdout
