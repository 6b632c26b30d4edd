"""The live dashboard in a real browser: JupyterLab serves the demo notebook, headless Chromium (driven by
Playwright) runs it, a job with 2 Ray workers starts in the kernel, and a slider moved with the keyboard
reaches the job's metrics on disk while the plots keep streaming. Also, without a browser: a value the
job refuses changes nothing."""
import json
import math
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from conftest import BIN, ROOT, publish_image

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
DEMO = ROOT / "nbs" / "experiments" / "live_dashboard.ipynb"
ARTIFACTS = ROOT / "tests" / "artifacts"
# The knob the browser moves: the soft-sync knob (K local updates before aggregating), its config key and a value it refuses.
PRESET, KNOB, KEY, BAD = "cartpole-soft", "local_steps", "sync.local_steps", 0
# The jobs the browser steers: (preset, knob its slider moves, runtime, workers). Soft sync on Ray, and the on-device loop
# in the kernel's own process (its lr on a log slider, whose readout shows 3 significant digits).
STEERED = [("cartpole-soft", "local_steps", "ray", 2), ("cartpole-ondevice", "lr", "serial", 1),
           ("stateless-cartpole-lstm-ondevice", "lr", "serial", 1),     # (a recurrent policy: its state drift drawn)
           ("pendulum-sac", "updates_per_segment", "ray", 2)]           # (SAC's update-to-data ratio, from 8 to the top)
# how a person moves each knob's slider: three steps right, or (a ratio's fine-grained slider) to its top end
KEYS = {"updates_per_segment": ["End"]}
RECURRENT = {"stateless-cartpole-lstm-ondevice"}
README_DASHBOARD = "cartpole-soft"                # its screenshot is the README's first picture (docs/images/dashboard.png)
KERNEL = "ddrl-lab"                               # the venv's kernelspec (the Makefile installs it with --sys-prefix)

needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: the browser test drives the "
                                    "system Chromium (apt-get install chromium; .ci/run installs it)")


# -- JupyterLab in a temporary root ---------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _demo_copy(dst: Path, **params) -> Path:
    "The demo notebook with papermill-style injected parameters after its `parameters` cell, on the venv's kernel."
    nb = json.loads(DEMO.read_text())
    i = next(i for i, c in enumerate(nb["cells"]) if "parameters" in c.get("metadata", {}).get("tags", []))
    src = "# Parameters injected by tests/test_browser.py\n" + "\n".join(f"{k} = {v!r}" for k, v in params.items())
    nb["cells"].insert(i + 1, dict(cell_type="code", metadata={"tags": ["injected-parameters"]}, execution_count=None,
                                   outputs=[], source=src))
    nb["metadata"]["kernelspec"] = {"name": KERNEL, "display_name": "Python (ddrl-lab)", "language": "python"}
    path = dst / DEMO.name
    path.write_text(json.dumps(nb, indent=1))
    return path


class Lab:
    "`jupyter lab` on 127.0.0.1 with a token, config and runtime files under `tmp`; `close()` ends it and its kernels."
    def __init__(self, root: Path, tmp: Path, env: dict):
        self.port, self.token = _free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(env, JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"), JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"),
                   IPYTHONDIR=str(tmp / "ipython"))
        news = tmp / "lab-settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        news.parent.mkdir(parents=True)
        news.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))   # no news toast over the page
        self.log = open(tmp / "jupyterlab.log", "w")
        self.proc = subprocess.Popen(
            [BIN / "jupyter", "lab", "--no-browser", "--ip", "127.0.0.1", f"--port={self.port}", "--port-retries=0",
             f"--ServerApp.token={self.token}", "--allow-root", "--LabApp.expose_app_in_browser=True",
             f"--ServerApp.root_dir={root}", f"--LabApp.user_settings_dir={tmp / 'lab-settings'}",
             f"--LabApp.workspaces_dir={tmp / 'lab-workspaces'}",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.server = psutil.Process(self.proc.pid)
        deadline = time.monotonic() + 90
        while True:
            try:
                self.api("status"); break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not start: {(tmp / 'jupyterlab.log').read_text()[-3000:]}")
                time.sleep(0.5)

    def api(self, path: str, method: str = "GET"):
        req = urllib.request.Request(f"{self.url}/api/{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def processes(self) -> list:
        "The server's descendants now: kernels and what they started (Ray's GCS, raylet, workers, actors)."
        try: return self.server.children(recursive=True)
        except psutil.NoSuchProcess: return []

    def close(self) -> None:
        "Shut every kernel down through the server (an orderly kernel shutdown), then stop the server."
        try:
            for k in self.api("kernels"): self.api(f"kernels/{k['id']}", "DELETE")
        except OSError: pass
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)      # the server shuts down what is left, then exits
            try: self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill(); self.proc.wait(10)
        self.log.close()


def _ray_process(p: psutil.Process) -> bool:
    try:
        name, cmd = p.name(), " ".join(p.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    return name.startswith("ray::") or cmd.startswith("ray::") or "raylet" in name or "gcs_server" in name


# -- the page -------------------------------------------------------------------------------------
KERNEL_STATE = """() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? [k.name, k.status, k.connectionStatus].join(' ') : null; }"""

RUN_ALL_ABOVE_LAST = """async () => { const app = window.jupyterapp, nb = app.shell.currentWidget.content;
  nb.activeCellIndex = nb.widgets.length - 1; nb.deselectAll();
  await app.commands.execute('notebook:run-all-above'); return nb.widgets.length; }"""

# the notebook's widget manager, found through the renderer factory that holds it (JS, as the start of an async body)
MANAGER = """const nb = window.jupyterapp.shell.currentWidget.content;
  const mime = 'application/vnd.jupyter.widget-view+json', f = nb.rendermime.getFactory(mime);
  if (!f) return null;
  const r = f.createRenderer({mimeType: mime, sanitizer: nb.rendermime.sanitizer, resolver: null, linkHandler: null,
                              latexTypesetter: null});
  const mgr = await r._manager.promise; r.dispose();"""
WIDGETS_RESTORED = "async () => { " + MANAGER + " return mgr.restoredStatus; }"

# the page's side of each plotly model: traces and title in its state, views, comm live, _view_count, its update chain
JS_MODELS = "async () => { " + MANAGER + """
  const out = [];
  for (const [id, p] of Object.entries(mgr._models)) { const m = await p;
    if (m.get('_model_name') !== 'AnyModel') continue;
    const d = m.get('_widget_data'), l = m.get('_widget_layout');
    const st = await Promise.race([m.state_change.then(() => 'ok', e => 'rejected: ' + e), new Promise(r => setTimeout(() => r('pending'), 1000))]);
    out.push([id.slice(0, 6), d ? d.length : null, l && l.title ? l.title.text : null, Object.keys(m.views || {}).length, m.comm_live, m.get('_view_count'), st]);
  }
  return out;
}"""
# when each comm_open reached the page, and any reconnection or comm_info (a widget restore) after Run All
WATCH = """() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel, t0 = performance.now(); window.__seen = [];
  k.connectionStatusChanged.connect((_, s) => window.__seen.push([(performance.now() - t0) / 1e3 | 0, s]));
  k.anyMessage.connect((_, a) => { const t = a.msg.header.msg_type; if (t === 'comm_open' || t.startsWith('comm_info'))
    window.__seen.push([(performance.now() - t0) / 1e3 | 0, t, (a.msg.content.comm_id || '').slice(0, 6)]); }); }"""

PLOT = """(title) => { const gd = [...document.querySelectorAll('.js-plotly-plot')].find(
    g => g.layout && g.layout.title && (g.layout.title.text || g.layout.title) === title);
  if (!gd || !gd.data || !gd.data[0] || !gd.data[0].x) return null;
  const x = Array.from(gd.data[0].x).filter(v => v !== null && isFinite(v));
  return [x.length, x.length ? Math.max(...x) : null]; }"""

PLOTS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(g => [g.layout && g.layout.title ?
  (g.layout.title.text || g.layout.title) : null, g.data ? g.data.length : null])"""

# panels of the dashboard drawn with no title or no trace (empty axes): a page must never show one
BLANK_PANELS = """(root) => [...root.querySelectorAll('.js-plotly-plot')].map((g, i) => [i,
  g.layout && g.layout.title ? (g.layout.title.text || g.layout.title) : '', !!g.querySelector('.main-svg .trace')])
  .filter(([i, title, traced]) => !title || !traced)"""

KERNEL_SAYS = """async (code) => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const f = k.requestExecute({code, silent: false, store_history: false}), out = [];
  f.onIOPub = m => { const c = m.content; if (c.text) out.push(c.text); if (c.ename) out.push(`${c.ename}: ${c.evalue}`); };
  await Promise.race([f.done, new Promise(r => setTimeout(r, 20000))]); return out.join(""); }"""
# what the kernel's dashboard holds: per panel its traces, the title and traces a new view draws, the views it has
DASH_STATE = ("print(dash.error, dash.draws, len(dash.rows), [(n, len(f.data), (f._widget_layout.get('title') or {}).get('text'), "
              "len(f._widget_data), f._view_count) for n, f in dash.figures.items()], len(dash.plots.children), dash.heals)")
SEEN = "() => window.__seen"


def _ask(page, js: str, *args):
    "What the page answers, or why it did not (for a failure message: never raises)."
    try: return page.evaluate(js, *args)
    except Exception as e: return f"(no answer: {str(e)[:200]})"


def _wait(what: str, fn, timeout: float, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v: return v
        if time.monotonic() > deadline: raise TimeoutError(f"gave up waiting for {what} after {timeout:.0f} s (last: {v!r})")
        time.sleep(every)


def _rows(runs: Path) -> list:
    "The rows of the one run directory under `runs`, read from its metrics.jsonl on disk."
    dirs = [d for d in runs.iterdir() if (d / "metrics.jsonl").exists()] if runs.exists() else []
    if not dirs: return []
    (run_dir,) = dirs
    return [json.loads(l) for l in (run_dir / "metrics.jsonl").read_text().splitlines() if l.strip()]


def _state(page, runs: Path) -> str:
    "What the page and the run directory say, for a failure message."
    rows = _rows(runs)
    metas = list(runs.glob("*/meta.json")) if runs.exists() else []
    meta = json.loads(metas[0].read_text()) if metas else {}
    try: outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
    except Exception as e: outputs = [f"(no outputs: {e})"]
    return (f"{len(rows)} rows on disk (last env_steps {rows[-1]['env_steps'] if rows else None}); meta status "
            f"{meta.get('status')!r} error {meta.get('error')!r}; kernel {page.evaluate(KERNEL_STATE)!r}; "
            f"cell outputs: {[o[:300] for o in outputs]}")


def _learning(runs: Path):
    "Rows after the learner's first gradient steps (SAC's first 1,000 env steps are random play), or None."
    rows = [r for r in _rows(runs) if r.get("optimizer_steps")]
    return rows if len(rows) >= 3 else None


def _steps_per_env_step(rows: list) -> float:
    "Gradient steps per env step between the first and the last of `rows`: the replay ratio the learner kept."
    return (rows[-1]["optimizer_steps"] - rows[0]["optimizer_steps"]) / (rows[-1]["env_steps"] - rows[0]["env_steps"])


def _steer(page, lab: Lab, runs: Path, t0: float, timings: dict, knob: str, drift: bool = False) -> dict:
    "Open the demo, run it, move the knob's slider; what it saw."
    page.goto(f"{lab.url}/lab/tree/{DEMO.name}?token={lab.token}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext", timeout=120_000)
    # "Run All" before the kernel is idle and connected runs nothing
    _wait("an idle, connected kernel", lambda: page.evaluate(KERNEL_STATE) == f"{KERNEL} idle connected", 120)
    timings["kernel_ready_s"] = time.monotonic() - t0
    # ...nor before JupyterLab's widget manager has restored the kernel's widgets: the restore lists the kernel's comms
    # and makes a second model for each one whose comm_open the page has not handled yet, whose views then draw a
    # model no message reaches (empty plots while the status line moves). Seen with a Run All at once after opening
    # a notebook on a loaded machine; usually done by the time the kernel is idle.
    _wait("the widget manager's restore", lambda: page.evaluate(WIDGETS_RESTORED) is True, 120)
    timings["restored_s"] = time.monotonic() - t0
    page.evaluate(WATCH)
    page.evaluate(RUN_ALL_ABOVE_LAST)          # every cell but the last, which stops the job

    def first_points():
        if "first_row_on_disk_s" not in timings and _rows(runs): timings["first_row_on_disk_s"] = time.monotonic() - t0
        return (page.evaluate(PLOT, "episode return") or [0])[0] > 0
    _wait("points in the return plot", first_points, 240)
    timings["first_points_s"] = time.monotonic() - t0
    if knob == "updates_per_segment":   # the ratio's effect is read from rows of learning, before and after the move
        _wait("rows of learning", lambda: _learning(runs), 120)
    before = _wait("rows on disk", lambda: _rows(runs), 30)[-1][f"knob_{knob}"]

    # move the slider with the keyboard, as a person would
    slider = page.locator(".widget-slider").filter(has=page.locator(".widget-label", has_text=knob))
    handle, readout = slider.locator(".noUi-handle"), slider.locator(".widget-readout")
    handle.scroll_into_view_if_needed()
    handle.focus()
    for key in KEYS.get(knob, ["ArrowRight"] * 3): page.keyboard.press(key)
    # the readout moves one step per key press as the page handles them; the value to look for in the rows is where it
    # comes to rest (read mid-way, it named a value the job never received: 5 read, 7 sent)
    readouts = []

    def at_rest():
        readouts.append(float(readout.inner_text()))
        return len(readouts) >= 3 and readouts[-1] != float(before) and readouts[-1] == readouts[-2] == readouts[-3]
    _wait("the slider's readout to move and come to rest", at_rest, 20)
    moved_to = readouts[-1]
    at_move = page.evaluate(PLOT, "episode return")
    timings["moved_s"] = time.monotonic() - t0

    # the job's metrics on disk report the new value...
    tol = 1e-6 if isinstance(before, int) else 1e-2          # (a float slider's readout is rounded)
    new = _wait(f"knob_{knob} = {moved_to} in metrics.jsonl", lambda: [
        r for r in _rows(runs) if math.isclose(r.get(f"knob_{knob}", math.nan), moved_to, rel_tol=tol)], 60)
    timings["in_metrics_s"] = time.monotonic() - t0
    if knob == "updates_per_segment":   # its effect in the rows: gradient steps per env step follow the new ratio
        # the limiter lets the workers run ahead of the learner by up to its max_diff (at 80 a segment and 2 workers,
        # 480 gradient steps) and the move's first row straddles both ratios: the ratio is read from the second row
        # at the new value on, over 400 env steps at least (4,000 gradient steps at the new ratio; that slack is an
        # eighth of it). Three rows, as before, spanned too few segments on a fast machine: CI read 4.5, not 10
        def settled():
            rows = [r for r in _rows(runs) if math.isclose(r.get(f"knob_{knob}", math.nan), moved_to, rel_tol=tol)][1:]
            return rows if len(rows) >= 2 and rows[-1]["env_steps"] - rows[0]["env_steps"] >= 400 else None
        after = _wait("rows over 400 env steps at the new ratio", settled, 240)
        old_rows = [r for r in _learning(runs) if math.isclose(r[f"knob_{knob}"], before, rel_tol=tol)]
        timings["ratio_before"], timings["ratio_after"] = _steps_per_env_step(old_rows), _steps_per_env_step(after)
    # ...and the plot keeps updating afterwards: more points (3 more refreshes at least), further right
    later = _wait("more points in the return plot", lambda: (lambda p: p if p[0] >= at_move[0] + 3 and p[1] > at_move[1] else None)(
        page.evaluate(PLOT, "episode return")), 60)
    timings["more_points_s"] = time.monotonic() - t0
    if drift:   # a recurrent policy's run: the state-drift panel has points too
        _wait("points in the state-drift plot", lambda: (page.evaluate(PLOT, "recurrent state drift") or [0])[0] > 0, 60)
        timings["drift_points_s"] = time.monotonic() - t0
    dashboard = page.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-slider"))
    # no blank panel: every plot the page shows has its title and a drawn trace (a panel is added once it has data)
    _wait("no panel without a title or a trace", lambda: not dashboard.evaluate(BLANK_PANELS), 30)
    dashboard.screenshot(path=str(ARTIFACTS / f"dashboard-{knob}.png"))
    heals = _ask(page, KERNEL_SAYS, "print(dash.heals)").strip()      # panels the dashboard had to give a new figure
    return dict(before=before, moved_to=moved_to, at_move=at_move, later=later, row=new[0], heals=heals)


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("preset,knob,runtime,workers", STEERED, ids=[s[0] for s in STEERED])
def test_slider_steers_a_job_in_jupyterlab(tmp_path, child_env, preset, knob, runtime, workers):
    from playwright.sync_api import sync_playwright
    assert (ROOT / "ddrl_lab" / "configs" / f"{preset}.yaml").exists(), f"preset {preset} is missing"
    lab_root, runs = tmp_path / "lab", tmp_path / "runs"
    lab_root.mkdir()
    _demo_copy(lab_root, preset=preset, runtime=runtime, num_workers=workers, total_env_steps=5_000_000,
               out=str(runs))
    ARTIFACTS.mkdir(exist_ok=True)
    t0, timings, seen = time.monotonic(), {}, []
    lab = Lab(lab_root, tmp_path, child_env)
    try:
        timings["lab_started_s"] = time.monotonic() - t0
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1500, "height": 2400})   # tall: the whole dashboard in view
                console = []                  # the page's errors and warnings, for a failure message
                page.on("console", lambda m: console.append(f"{m.type}: {m.text[:300]}") if m.type in ("error", "warning") else None)
                page.on("pageerror", lambda e: console.append(f"pageerror: {str(e)[:300]}"))
                try:
                    got = _steer(page, lab, runs, t0, timings, knob, drift=preset in RECURRENT)
                except Exception as e:
                    page.screenshot(path=str(ARTIFACTS / f"dashboard-{knob}-failure.png"))
                    raise AssertionError(f"{e}\n{_state(page, runs)}\nplots {_ask(page, PLOTS)}\n"
                                         f"kernel's dashboard {_ask(page, KERNEL_SAYS, DASH_STATE)}\ntimings {timings}; "
                                         f"screenshot {ARTIFACTS / f'dashboard-{knob}-failure.png'}\nconsole {console[-20:]}\n"
                                         f"page's models {_ask(page, JS_MODELS)}\nseen {_ask(page, SEEN)}") from e
            finally:
                browser.close()
        seen = lab.processes()
        if runtime == "ray": assert any(_ray_process(p) for p in seen), "the job's Ray processes were not found under the kernel"
    finally:
        seen = seen or lab.processes()
        lab.close()                           # kernels first (an orderly shutdown), then the server
        gone, alive = psutil.wait_procs(seen, timeout=30)
        for p in alive:                       # started by this test: end them by id, then fail below
            try: p.kill()
            except psutil.NoSuchProcess: pass
        timings["total_s"] = time.monotonic() - t0
        print("timings:", {k: round(v, 1) for k, v in timings.items()})
    assert not [p for p in alive if _ray_process(p)], f"Ray processes left behind: {alive}"
    assert not alive, f"processes left behind: {alive}"
    if preset == README_DASHBOARD:            # the README's first picture: this test's own screenshot
        publish_image(ARTIFACTS / f"dashboard-{knob}.png", "dashboard.png",
                      "tests/test_browser.py::test_slider_steers_a_job_in_jupyterlab")
    if knob == "updates_per_segment":   # 8 steps a segment of 8 env steps, then 80: ten times the steps per env step
        assert timings["ratio_after"] > 5 * timings["ratio_before"], timings
    print(f"{knob}: {got['before']} -> {got['moved_to']}; return-plot [points, last env_steps] at the move "
          f"{got['at_move']}, later {got['later']}; first row with the new value: time_s {got['row']['time_s']}; "
          f"panels given a new figure: {got['heals']}")


def test_a_refused_knob_leaves_the_job_unchanged(tmp_path):
    "Plain Python: the dashboard asks for an out-of-range value, the job refuses it and runs on with its knobs as they were."
    import re
    from ddrl_lab import ConfigError, Dashboard, Job
    job = Job(PRESET, {"run.runtime": "serial", "run.total_env_steps": 1_000_000, "run.target_return": None,
                       "run.log_interval_s": 0.05, "run.out": str(tmp_path)}).start()
    dash = None
    try:
        dash = Dashboard(job, refresh_s=0.2)
        _wait("rows", lambda: len(job.metrics()) >= 3, 60, every=0.05)
        knobs, slider = dict(job.knobs), dash.sliders[KNOB]
        with pytest.raises(ConfigError, match=re.escape(f"{KEY} = {BAD}")):
            job.update(**{KNOB: BAD})
        assert dash.set_knob(KNOB, BAD) is False
        assert "refused" in dash.message.value and KNOB in dash.message.value
        assert slider.value == knobs[KNOB] and job.knobs == knobs
        n, steps = len(job.metrics()), job.metrics().env_steps.iloc[-1]
        _wait("more rows", lambda: len(job.metrics()) > n + 3, 60, every=0.05)
        later = job.metrics()
        assert job.status == "running" and later.env_steps.iloc[-1] > steps
        assert (later[f"knob_{KNOB}"].iloc[n:] == knobs[KNOB]).all()
        assert dash.error is None, dash.error
    finally:
        job.stop()
        if dash is not None: dash.close()
