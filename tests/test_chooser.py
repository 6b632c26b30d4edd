"""The topology chooser (`nbs/studies/01_chooser.ipynb`) against the real command: every valid cell of its table runs a few
hundred env steps through `ddrl-lab run` (on the serial runtime, or on Ray where the cell needs several learner
processes), and every refused combination is refused by `ddrl-lab run` itself with exit 2, leaving no run directory."""
import json
import time

import pytest

from ddrl_lab.studies.chooser import chooser_cells
from ddrl_lab.cli import main

CELLS = chooser_cells()
VALID = [c for c in CELLS if c.runtime]
REFUSED = [c for c in CELLS if not c.runtime]
SHORT = ["run.total_env_steps=300", "run.record_episode=0", "run.target_return=null", "run.log_interval_s=0"]


def _id(c) -> str:
    return f"{c.mode}-{c.sync or 'na'}-{c.plane.replace(' ', '_')}-{c.algo}"


def _sets(overrides) -> list[str]:
    return [a for o in overrides for a in ("--set", o)]


def _steps(run_dir) -> int:
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return max(r.get("env_steps", 0) for r in rows)


def _loop(cell) -> str:
    "The loop a cell must run, by the rules the chooser's prose states (written out here, not asked of the code)."
    if cell.mode in ("on-device", "central-inference"):
        return {"on-device": "on-device", "central-inference": "central"}[cell.mode]
    if cell.algo in ("dqn", "r2d2"):
        return "replay"
    if cell.plane == "one learner" and cell.sync in ("sync", "async"):
        return {"sync": "barrier", "async": "channel"}[cell.sync]
    if cell.sync == "sync":
        return "plane-sync"
    return "plane-hybrid" if cell.plane == "hybrid" else "plane-pipelined"


def _ran_as_the_cell_says(cell, run_dir, runtime: str) -> None:
    """The run directory shows the cell's topology, sync mode, plane and algorithm: in `config.yaml` every setting of
    the cell, in `meta.json` the runtime, the loop that ran and the learners it started."""
    import yaml
    from ddrl_lab.config.load import flat_config
    from ddrl_lab.studies.chooser import PLANES, cell_settings
    ran = flat_config(yaml.safe_load((run_dir / "config.yaml").read_text()))
    want = cell_settings(cell.mode, cell.sync, cell.plane, cell.algo)
    assert {k: ran[k] for k in want} == want, (cell, {k: ran[k] for k in want})
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["runtime"] == runtime and meta["loop"]["name"] == _loop(cell), (cell, meta["runtime"], meta["loop"])
    assert meta["loop"]["learners"] == PLANES[cell.plane][0], (cell, meta["loop"])


@pytest.mark.parametrize("cell", [c for c in VALID if c.runtime == "serial"], ids=_id)
def test_a_valid_cell_runs_on_the_serial_runtime(cell, tmp_path):
    t0 = time.monotonic()
    rc = main(["run", cell.preset, *_sets(cell.overrides + SHORT + ["run.runtime=serial", f"run.out={tmp_path}"])])
    assert rc == 0, cell.command
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert _steps(run_dir) >= 300, cell.command
    _ran_as_the_cell_says(cell, run_dir, "serial")
    print(f"{_id(cell)}: {time.monotonic() - t0:.1f} s")


@pytest.mark.parametrize("cell", [c for c in VALID if c.runtime == "ray"], ids=_id)
def test_a_valid_cell_that_needs_ray_runs_on_ray(cell, tmp_path, ray_cluster):
    t0 = time.monotonic()
    rc = main(["run", cell.preset, *_sets(cell.overrides + SHORT + [f"run.out={tmp_path}"])])
    assert rc == 0, cell.command
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert _steps(run_dir) >= 300, cell.command
    _ran_as_the_cell_says(cell, run_dir, "ray")
    print(f"{_id(cell)}: {time.monotonic() - t0:.1f} s")


def test_every_refused_combination_is_refused_by_the_command(tmp_path, capsys):
    assert len(REFUSED) >= 30
    for cell in REFUSED:
        rc = main(["run", cell.preset, *_sets(cell.overrides + ["run.runtime=ray", f"run.out={tmp_path}"])])
        err = capsys.readouterr().err
        assert rc == 2, (_id(cell), rc, err[-500:])
        assert cell.reason.split(":")[0] in err, (_id(cell), err[-500:])
    assert not list(tmp_path.iterdir()), "a refused run left a run directory"
