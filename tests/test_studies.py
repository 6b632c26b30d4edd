"""The studies of issue #10 (deployments, replay, shadow) really executed by papermill, in a real kernel, with
small parameters: the serial runtime and budgets of a few thousand env steps. A bad parameter stops each study in
its first executed cell with the config's message, before any run directory exists."""
import json

import papermill as pm
import pytest

from conftest import ROOT

STUDIES = ROOT / "nbs" / "experiments"


def execute(name: str, tmp_path, **parameters) -> str:
    "Run study `name` with `parameters`; the executed notebook's text."
    out_nb = tmp_path / f"{name}.ipynb"
    pm.execute_notebook(str(STUDIES / f"{name}.ipynb"), str(out_nb), kernel_name="python3", progress_bar=False,
                        parameters=parameters)
    return out_nb.read_text()


def run_statuses(runs_dir) -> dict:
    "Run name -> status of every run directory under `runs_dir` (`NAME-YYYYmmdd-HHMMSS-hash8`)."
    return {p.name.rsplit("-", 3)[0]: json.loads((p / "meta.json").read_text())["status"] for p in runs_dir.iterdir()}


def rejects(name: str, tmp_path, message: str, **parameters) -> None:
    "The study stops in its first executed cell (the validation cell) with `message`, and leaves no run directory."
    with pytest.raises(pm.PapermillExecutionError) as e:
        execute(name, tmp_path, out=str(tmp_path / "runs"), **parameters)
    assert message in str(e.value), str(e.value)[-2000:]
    # executed before it: the parameters cell (1) and the injected parameters (2); the validation cell is the third
    assert e.value.exec_count == 3, f"failed in cell {e.value.exec_count}, not in the validation cell"
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_deployments_study(tmp_path):
    "Co-located, decoupled sync and async as jobs, the on-device path as a fourth column; figures and the table."
    text = execute("deployments", tmp_path, runtime="serial", total_env_steps=4096, target_return=None,
                   out=str(tmp_path / "runs"))
    assert run_statuses(tmp_path / "runs") == {"deploy-co-located": "finished", "deploy-decoupled-sync": "finished",
                                               "deploy-decoupled-async": "finished"}
    assert "application/vnd.plotly.v1+json" in text and "policy lag (mean, versions) vs env_steps" in text
    assert "on-device (cpu, cartpole-ondevice)" in text or "on-device (cuda" in text
    for column in ("co-located", "decoupled-sync", "decoupled-async", "on-device", "mean_env_steps_per_s", "policy_lag_max"):
        assert column in text, column


def test_deployments_study_rejects_a_bad_deployment(tmp_path):
    rejects("deployments", tmp_path, "topology.mode = 'co-locatd': expected one of",
            deployments=["co-locatd", "decoupled-sync"], runtime="serial")


@pytest.mark.slow
def test_replay_study(tmp_path):
    "Prioritized and uniform replay, recency on and off (one capacity here), and the rebalance-period bias."
    text = execute("replay", tmp_path, runtime="serial", total_env_steps=2048, target_return=None, capacities=[2000],
                   recency_half_lives=[None, 20.0], updates_per_segment=4, learning_starts=256,
                   rebalance_periods=[1, 10, 100], stale_updates=200, out=str(tmp_path / "runs"))
    assert run_statuses(tmp_path / "runs") == {f"replay-{k}-2000-{r}": "finished" for k in ("prioritized", "uniform")
                                               for r in ("norecency", "recency20")}
    assert "sampling bias vs rebalance period" in text and "sampling_tv_distance" in text
    assert "replay_age_mean" in text and "replay.kind=uniform" in text      # the legend says what differs


def test_replay_study_rejects_a_bad_kind(tmp_path):
    rejects("replay", tmp_path, "replay.kind = 'prioritised': expected one of none, uniform, prioritized",
            kinds=["prioritised"], runtime="serial")


@pytest.mark.slow
def test_shadow_study(tmp_path):
    """A shadow of sync against async PPO on the same seeds, side by side as two Tune trials: two runs, a divergence
    step flagged as the rows arrived, the diff and the table."""
    text = execute("shadow", tmp_path, total_env_steps=4096, out=str(tmp_path / "runs"))
    (pair,) = (tmp_path / "runs").glob("pair-shadow-*")
    assert {**run_statuses(pair / "runs" / "a"), **run_statuses(pair / "runs" / "b")} == {"shadow-a": "finished",
                                                                                          "shadow-b": "finished"}
    assert "flagged as the rows arrived: {'env_steps': " in text and "B stopped there: False" in text
    assert "keys that differ: ['sync.mode']" in text and "diverged_at: " in text and "config sync.mode" in text
    assert "diverged at" in text                                              # the figure's title


def test_shadow_study_rejects_a_bad_value(tmp_path):
    rejects("shadow", tmp_path, "config b: algo.lr = -1.0 is out of range", overrides_b={"algo.lr": -1})


def test_shadow_study_rejects_different_seeds(tmp_path):
    rejects("shadow", tmp_path, "run.seed differs (a: 0, b: 1)", overrides_b={"run.seed": 1})


@pytest.mark.slow
def test_atari_study(tmp_path):
    "Pong by topology, two of them for a few seconds each: both run, the table and the plots are there."
    text = execute("atari", tmp_path, topologies=["ppo-co-located", "impala-co-located"], minutes=0.1,
                   out=str(tmp_path / "runs"))
    statuses = run_statuses(tmp_path / "runs")
    assert statuses == {"atari-ppo-co-located": "stopped", "atari-impala-co-located": "stopped"}, statuses
    assert "frames_per_s" in text and "Pong: return against frames" in text


def test_atari_study_rejects_a_bad_topology(tmp_path):
    rejects("atari", tmp_path, "topologies = ['impala-decoupld']: expected a non-empty list of", topologies=["impala-decoupld"])


@pytest.mark.slow
def test_staleness_study(tmp_path):
    "The three fallbacks under one slow link, in-process with a short budget: three runs, the figures and the table."
    text = execute("staleness", tmp_path, runtime="serial", total_env_steps=30_000, drill="8000:net_delay:1:0.3:1",
                   fallback_rows=2, out=str(tmp_path / "runs"))
    (found,) = (tmp_path / "runs").glob("study-staleness-*")                  # a study on Ray Tune: three trials
    statuses = {t.name: run_statuses(t) for t in (found / "runs").iterdir()}
    assert statuses == {f"cell{i}-seed0": {f"cell{i}-seed0": "finished"} for i in range(3)}, statuses
    assert "application/vnd.plotly.v1+json" in text and "fallback on" in text and "dropped_stale" in text


def test_staleness_study_rejects_a_bad_fallback(tmp_path):
    rejects("staleness", tmp_path, "sync.fallback = 'offpolicy': expected one of", fallbacks=["offpolicy"],
            runtime="serial")


@pytest.mark.slow
def test_a_study_runs_its_grid_over_seeds_within_the_machines_cpus(tmp_path, capsys):
    """`ddrl-lab study` (#65): 3 cells x 3 seeds = 9 Ray Tune trials, each a job with its own run directory, never
    more at once than the cluster's CPUs hold (a trial asks for its driver's CPU and its actors'); per cell the IQM,
    mean and 95 % interval of time to the target and of the final return."""
    import math
    import os
    from datetime import datetime

    from ddrl_lab import load_config
    from ddrl_lab.cli import main
    from ddrl_lab.studies.tune import trial_bundles

    code = main(["study", "cartpole-ppo", "--grid", "sync.local_steps=8,16,32", "--seeds", "3",
                 "--set", "run.total_env_steps=12000", "--set", "run.record_episode=0", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    for v in (8, 16, 32):
        assert f"sync.local_steps={v}: 3 seeds" in out, out
    assert out.count("final return:       IQM") == 3 and "time to target (s):" in out, out
    metas = [json.loads(p.read_text()) for p in tmp_path.glob("study-*/runs/*/*/meta.json")]
    assert len(metas) == 9 and {m["status"] for m in metas} == {"finished"}, [m["status"] for m in metas]
    # at most as many trials at once as the local cluster's CPUs hold (it holds one trial at least)
    per_trial = len(trial_bundles(load_config("cartpole-ppo")))
    allowed = max(per_trial, os.cpu_count()) // per_trial
    spans = [(datetime.fromisoformat(m["start"]), datetime.fromisoformat(m["end"])) for m in metas]
    most = max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)
    assert 1 <= most <= allowed, (most, allowed, per_trial)
    record = json.loads(next(tmp_path.glob("study-*/study.json")).read_text())
    assert [c["cell"] for c in record["cells"]] == [{"sync.local_steps": v} for v in ("8", "16", "32")]
    assert math.isfinite(record["cells"][0]["final_return"]["iqm"])


@pytest.mark.slow
def test_a_population_exploits_through_checkpoints_and_names_its_lineage(tmp_path):
    """PBT (#65): four members of PPO on CartPole perturb the learning rate, a live knob; at least one member copies
    another; the child's learner started from exactly the parent's checkpoint (the file it restored from has the
    bytes of the parent's own checkpoint at that version, and its versions go on from there), it then ran with the
    explored learning rate, and the lineage table and study.json name the exploit."""
    import hashlib
    from pathlib import Path

    from ddrl_lab.runlog.metrics import read_jsonl
    from ddrl_lab.studies.tune import study

    r = study("cartpole-ppo", None, seeds=4, scheduler="pbt", mutations={"algo.lr": [1e-4, 3e-4, 1e-3, 3e-3]},
              interval=2048, out=tmp_path,
              overrides={"run.runtime": "serial", "run.total_env_steps": 10_000, "run.checkpoint_every": 2,
                         "run.record_episode": 0})
    lin = r.lineage
    assert len(lin) >= 1, r.text()
    assert (lin["child"] != lin["parent"]).all(), lin
    assert not lin.duplicated(["child", "sha256"]).any(), lin                  # each exploit once
    checked = 0
    for e in lin.itertuples():
        ckpt = f"learner-v{e.version:06d}.pt"
        for child_dir in (tmp_path / r.dir.name / "runs" / e.child).glob(f"*-from-{e.parent}-v{e.version}"):
            rows = [x for x in read_jsonl(child_dir / "metrics.jsonl") if x["policy_version"] > e.version]
            if not rows:                     # paused by Tune before its first update: nothing to check there
                continue
            meta = json.loads((child_dir / "meta.json").read_text())
            assert meta["restored_from"] == ckpt, (meta.get("restored_from"), ckpt)
            parent_run = Path(meta["lineage"][-1]["run_dir"])
            assert hashlib.sha256((parent_run / "checkpoints" / ckpt).read_bytes()).hexdigest() == e.sha256
            assert rows[-1]["knob_lr"] == e.knobs_after["lr"], (rows[-1]["knob_lr"], e.knobs_after)
            checked += 1
    assert checked >= 1, "no child trained on after an exploit"
    record = json.loads((r.dir / "study.json").read_text())
    assert len(record["lineage"]) == len(lin) and len(record["members"]) == 4
    assert f"{len(lin)} exploits" in r.text()


@pytest.mark.slow
def test_asha_stops_the_worst_trials_early(tmp_path):
    """ASHA (#65): four trials of PPO on CartPole, two learning rates (one of them too small to learn) x two seeds,
    rungs every 2,048 env steps halving the field: at least one trial is stopped before its budget (its job stopped
    cleanly, its run directory kept), at least one runs the whole budget, and the table still has every cell."""
    from ddrl_lab.runlog.run_dir import RunFiles
    from ddrl_lab.studies.tune import study

    r = study("cartpole-ppo", {"algo.lr": [1e-6, 1e-3]}, seeds=2, scheduler="asha", interval=2048, out=tmp_path,
              overrides={"run.runtime": "serial", "run.total_env_steps": 16_384, "run.target_return": None,
                         "run.record_episode": 0})
    ends = {d.parent.name: (RunFiles(d).meta()["status"], int(RunFiles(d).rows().env_steps.iloc[-1]))
            for d in (r.dir / "runs").glob("*/*/") if (d / "meta.json").exists()}
    assert len(ends) == 4, ends
    assert any(status == "stopped" and steps < 16_384 for status, steps in ends.values()), ends
    assert any(status == "finished" and steps >= 16_384 for status, steps in ends.values()), ends
    assert len(r.rows) == 2 and not r.failed, r.text()


@pytest.mark.slow
def test_continuous_study(tmp_path):
    """SAC's two studies (#63) on `pendulum-sac` with a short budget, in-process: 1 and 2 workers at the preset's ratio,
    then ratios 4 and 16 on one worker; the figures and the table, and the learner kept each ratio (gradient steps per
    env step, from the rows)."""
    from ddrl_lab.runlog.run_dir import RunFiles
    text = execute("continuous", tmp_path, preset="pendulum-sac", workers=[1, 2], ratios=[4.0, 16.0], ratio_workers=1,
                   total_env_steps=3000, runtime="serial", out=str(tmp_path / "runs"))
    assert "return vs wall time" in text and "grad_steps_per_env_step" in text
    (ratio_study,) = (tmp_path / "runs").glob("study-sac-ratio-*")
    kept = {}
    for trial in (ratio_study / "runs").iterdir():
        (run,) = [p for p in trial.iterdir() if (p / "meta.json").exists()]
        files = RunFiles(run)
        df = files.rows().dropna(subset=["optimizer_steps"])
        ratio = files.config().algo.updates_per_segment
        kept[ratio] = (df.optimizer_steps.iloc[-1] - df.optimizer_steps.iloc[0]) / (df.env_steps.iloc[-1] - df.env_steps.iloc[0])
    assert set(kept) == {4.0, 16.0} and kept[16.0] > 3 * kept[4.0], kept


def test_continuous_study_rejects_a_bad_worker_count(tmp_path):
    rejects("continuous", tmp_path, "topology.num_workers = 0", workers=[0], runtime="serial")


@pytest.mark.slow
def test_scale_study(tmp_path):
    """The planner's study (`scale.ipynb`) on one config and one network, calibrated in-process: the unit costs, the
    saturation table and the verdict, the channel's lag figure."""
    text = execute("scale", tmp_path, presets=["cartpole-impala"], networks=["10gbe"], workers=[1, 2, 64],
                   runtime="serial")
    for shown in ("sample_ms", "weights_share_of_traffic", "channel: p95 version lag against workers",
                  "cartpole-impala: "):
        assert shown in text, shown
