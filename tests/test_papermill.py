"""The quickstart study really executed by papermill, in a real kernel."""
import json

import papermill as pm
import pytest

from conftest import ROOT, publish_image
from test_browser import CHROMIUM, CHROMIUM_ARGS

QUICKSTART = ROOT / "nbs" / "experiments" / "quickstart.ipynb"


@pytest.mark.slow
def test_quickstart_learns_and_writes_a_report(tmp_path):
    out_nb = tmp_path / "quickstart.ipynb"
    pm.execute_notebook(str(QUICKSTART), str(out_nb), kernel_name="python3", progress_bar=False,
                        parameters=dict(runtime="serial", out=str(tmp_path / "runs"), total_env_steps=150_000))
    run_dir, = (tmp_path / "runs").iterdir()
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "finished"
    report = (run_dir / "report.html").read_text()
    assert "episode_return_mean vs env_steps" in report and "env_steps_per_s vs time_s" in report
    text = out_nb.read_text()
    assert "final episode_return_mean" in text and "application/vnd.plotly.v1+json" in text
    assert "entropy bonus in the rows: [0.0, 0.001]" in text          # job.update reached the running job
    assert "image/gif" in text                                         # the episode is shown
    # the README's pictures of a first run: this run's episode, and its return curve as report.html draws it
    publish_image(run_dir / "episode.gif", "episode.gif", "tests/test_papermill.py::test_quickstart_learns_and_writes_a_report")
    if CHROMIUM.exists():
        _screenshot_return_curve(run_dir / "report.html", tmp_path / "return.png")
        publish_image(tmp_path / "return.png", "return.png",
                      "tests/test_papermill.py::test_quickstart_learns_and_writes_a_report")


def _screenshot_return_curve(report, png) -> None:
    "The return panel of `report` (self-contained: plotly inline) as Chromium draws it."
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(report.as_uri(), wait_until="load")
            figure = page.locator("figure.panel").filter(has_text="episode_return_mean vs env_steps").first
            figure.locator(".js-plotly-plot .main-svg .trace").first.wait_for(timeout=30_000)
            figure.screenshot(path=str(png))
        finally:
            browser.close()


def test_quickstart_rejects_a_bad_parameter(tmp_path):
    with pytest.raises(pm.PapermillExecutionError) as e:
        pm.execute_notebook(str(QUICKSTART), str(tmp_path / "bad.ipynb"), kernel_name="python3", progress_bar=False,
                            parameters=dict(runtime="serial", num_workers="four", out=str(tmp_path / "runs")))
    assert "topology.num_workers = 'four' has the wrong type" in str(e.value)
    assert not (tmp_path / "runs").exists()



def test_quickstart_rejects_an_unknown_parameter_name(tmp_path):
    "A misspelt `-p` name would otherwise be injected, ignored, and the study run with its default."
    with pytest.raises(pm.PapermillExecutionError) as e:
        pm.execute_notebook(str(QUICKSTART), str(tmp_path / "bad.ipynb"), kernel_name="python3", progress_bar=False,
                            parameters=dict(runtime="serial", num_worker=4, out=str(tmp_path / "runs")))
    assert "unknown parameter 'num_worker' (did you mean 'num_workers'?)" in str(e.value)
    assert e.value.exec_count == 3              # parameters, injected parameters, then the first study cell
    assert not (tmp_path / "runs").exists()

SYNC_MODES = ROOT / "nbs" / "experiments" / "sync_modes.ipynb"


@pytest.mark.slow
def test_sync_modes_study_runs_the_three_modes_and_both_planes_under_sync(tmp_path):
    """Small parameters: each arm runs its budget on Ray, sync on both parameter planes (parameter server and
    all-reduce under the same mode); the notebook ends with the table and both figures."""
    import yaml
    out_nb = tmp_path / "sync_modes.ipynb"
    pm.execute_notebook(str(SYNC_MODES), str(out_nb), kernel_name="python3", progress_bar=False,
                        parameters=dict(out=str(tmp_path / "runs"), total_env_steps=4096, target_return=None))
    arms = []
    for r in (tmp_path / "runs").glob("study-sync_modes-*/runs/*/*/"):                # a study on Ray Tune: a trial each
        assert json.loads((r / "meta.json").read_text())["status"] == "finished"
        sync = yaml.safe_load((r / "config.yaml").read_text())["sync"]
        arms.append((sync["mode"], sync["aggregation"]))
    assert sorted(arms) == [("async", "parameter-server"), ("soft", "parameter-server"), ("sync", "allreduce"),
                            ("sync", "parameter-server")], arms
    text = out_nb.read_text()
    assert "steps_to_target" in text and "gradient lag at the server" in text
    assert "sync-allreduce" in text and "sync-parameter-server" in text          # the table's two sync arms


def test_sync_modes_rejects_a_bad_parameter_first(tmp_path):
    with pytest.raises(pm.PapermillExecutionError) as e:
        pm.execute_notebook(str(SYNC_MODES), str(tmp_path / "bad.ipynb"), kernel_name="python3", progress_bar=False,
                            parameters=dict(local_steps=0, out=str(tmp_path / "runs")))
    assert "sync.local_steps = 0" in str(e.value)
    assert not (tmp_path / "runs").exists()


RECURRENT = ROOT / "nbs" / "experiments" / "recurrent.ipynb"


@pytest.mark.slow
def test_recurrent_study_runs_all_three_parts(tmp_path):
    """Small parameters, one process: part 1's four policies on the device, part 2's async runs from the stored state
    and from zeros, part 3's four R2D2 variants (stored or zero state, with or without burn-in); the notebook ends
    with the three tables."""
    out_nb = tmp_path / "recurrent.ipynb"
    pm.execute_notebook(str(RECURRENT), str(out_nb), kernel_name="python3", progress_bar=False,
                        parameters=dict(out=str(tmp_path / "runs"), total_env_steps=8192, staleness=[2], r2d2_env_steps=8192,
                                        lag_env_steps=4096, lag_workers=2, runtime="serial"))
    runs = sorted(p.name.split("-")[1:3] for p in (tmp_path / "runs").iterdir())
    assert runs == [["lag2", "stored"], ["lag2", "zero"]], runs
    text = out_nb.read_text()
    assert "stack4" in text and "state_drift_mean" in text and "final_return" in text and "zero+burn-in" in text


def test_recurrent_study_rejects_an_unknown_policy_first(tmp_path):
    with pytest.raises(pm.PapermillExecutionError) as e:
        pm.execute_notebook(str(RECURRENT), str(tmp_path / "bad.ipynb"), kernel_name="python3", progress_bar=False,
                            parameters=dict(policies=["lstm", "transformer"], out=str(tmp_path / "runs")))
    assert "unknown ['transformer']" in str(e.value)
    assert not (tmp_path / "runs").exists()
