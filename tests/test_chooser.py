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


@pytest.mark.parametrize("cell", [c for c in VALID if c.runtime == "serial"], ids=_id)
def test_a_valid_cell_runs_on_the_serial_runtime(cell, tmp_path):
    t0 = time.monotonic()
    rc = main(["run", cell.preset, *_sets(cell.overrides + SHORT + ["run.runtime=serial", f"run.out={tmp_path}"])])
    assert rc == 0, cell.command
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert _steps(run_dir) >= 300, cell.command
    print(f"{_id(cell)}: {time.monotonic() - t0:.1f} s")


@pytest.mark.parametrize("cell", [c for c in VALID if c.runtime == "ray"], ids=_id)
def test_a_valid_cell_that_needs_ray_runs_on_ray(cell, tmp_path, ray_cluster):
    t0 = time.monotonic()
    rc = main(["run", cell.preset, *_sets(cell.overrides + SHORT + [f"run.out={tmp_path}"])])
    assert rc == 0, cell.command
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert _steps(run_dir) >= 300, cell.command
    print(f"{_id(cell)}: {time.monotonic() - t0:.1f} s")


def test_every_refused_combination_is_refused_by_the_command(tmp_path, capsys):
    assert len(REFUSED) >= 30
    for cell in REFUSED:
        rc = main(["run", cell.preset, *_sets(cell.overrides + ["run.runtime=ray", f"run.out={tmp_path}"])])
        err = capsys.readouterr().err
        assert rc == 2, (_id(cell), rc, err[-500:])
        assert cell.reason.split(":")[0] in err, (_id(cell), err[-500:])
    assert not list(tmp_path.iterdir()), "a refused run left a run directory"
