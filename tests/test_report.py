"""The report a run leaves behind, opened in a real browser: a CartPole run and a MinAtar Breakout run each end with
an episode of their policy (an animated GIF in report.html) and every panel with data drawn by plotly.js; no console
errors, and nothing requested from the network (the page is self-contained)."""
import io
import time
from pathlib import Path

import pytest
from PIL import Image

from ddrl_lab.analysis.episodes import read_episode
from ddrl_lab.run.job import Job
from test_browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium

RUNS = {   # preset -> overrides: short serial runs (the policy need not be good; the episode must be its own)
    "cartpole-ppo": {"run.runtime": "serial", "run.total_env_steps": 8_000, "run.target_return": None},
    "minatar-breakout": {"run.total_env_steps": 20_000, "env.num_envs": 64},
}

PAGE = """() => { const img = document.querySelector('img.episode');
  return { img: img ? [img.complete, img.naturalWidth, img.naturalHeight] : null,
           plots: document.querySelectorAll('.js-plotly-plot').length,
           drawn: [...document.querySelectorAll('.js-plotly-plot')].filter(g => g.querySelector('.main-svg g.trace')).length,
           titles: [...document.querySelectorAll('.js-plotly-plot')].map(g => g.layout.title.text) }; }"""


@needs_chromium
def test_reports_show_a_playable_episode_and_their_panels(tmp_path):
    from playwright.sync_api import sync_playwright
    jobs = {p: Job(p, overrides={**o, "run.out": str(tmp_path)}).start().wait() for p, o in RUNS.items()}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for preset, job in jobs.items():
                ep = read_episode(job.run_dir)
                gif = Image.open(io.BytesIO(ep["gif"]))
                assert gif.n_frames > 1 and ep["frames"] == ep["episode_length"] + 1, (preset, ep)   # it moves
                page, errors, remote = browser.new_page(), [], []
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("request", lambda r: remote.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
                page.goto((job.run_dir / "report.html").as_uri())
                page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length > 0", timeout=30_000)
                seen = page.evaluate(PAGE)
                complete, width, height = seen["img"]
                assert complete and (width, height) == gif.size, (preset, seen["img"], gif.size)
                assert seen["plots"] >= 6 and seen["drawn"] >= seen["plots"], (preset, seen)
                assert {"env steps / s", "episode return", "losses", "entropy and KL"} <= set(seen["titles"]), seen["titles"]
                assert "channel fill" not in seen["titles"] and "replay" not in seen["titles"]   # co-located / sync: no such panels
                assert not errors and not remote, (preset, errors, remote)
                page.close()
        finally:
            browser.close()


def test_a_running_job_records_an_episode_of_its_current_policy_on_request(tmp_path):
    "Job.record_episode() on a running job: a fresh checkpoint at its next update, one episode from it; the Dashboard's button shows it."
    from ddrl_lab.ui.dashboard import Dashboard
    job = Job("cartpole-ppo", overrides={"run.runtime": "serial", "run.total_env_steps": 10_000_000, "run.target_return": None,
                                         "run.out": str(tmp_path), "run.record_episode": 50}).start()
    try:
        while len(job.metrics()) < 2: time.sleep(0.05)
        first = job.record_episode()
        assert job.status == "running" and first["episode_length"] <= 50 and first["frames"] == first["episode_length"] + 1
        dash = Dashboard(job, refresh_s=0.2)
        assert dash.episode.value == (job.run_dir / "episode.gif").read_bytes()          # the episode on disk is shown
        assert dash.record_episode(wait=True) is not None
        second = read_episode(job.run_dir)
        assert second["policy_version"] > first["policy_version"]                         # a newer policy, later in the run
        assert dash.episode.value == second["gif"] and f"v{second['policy_version']}" in dash.episode_caption.value
        dash.close()
    finally:
        job.stop()
    final = read_episode(job.run_dir)
    assert final["policy_version"] >= second["policy_version"] and final["checkpoint"] != first["checkpoint"]
