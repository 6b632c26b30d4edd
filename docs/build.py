"""Build the docs site from the notebooks (`make docs` runs this).

1. Execute each notebook of nbs/ and nbs/experiments/ on the `ddrl-lab` kernel (working directory: a scratch
   folder under the build directory, so nbs/ is never written) into <build>/executed/, cached by a hash of
   the notebook's bytes: a second build executes only the notebooks that changed. Cells marked `#| slow`
   or `#| learning` are skipped, as `nbdev_test` does without `--flags`. A notebook that fails to execute fails the build
   (after the others have run), named; no site is written then.
2. Copy them into <build>/src/ for the site: nbdev directives and stderr dropped, each plotly output replaced
   by its figure as JSON (assets/figures.js draws it with the site's own plotly.min.js), widgets by a note.
3. Write one API page per `ddrl_lab` module (mkdocstrings), copy the assets, build docs/mkdocs.yml.

    python docs/build.py                                  # everything, into site/
    python docs/build.py --site-dir /tmp/site --execute index.ipynb experiments/shadow.ipynb \
        --param experiments/shadow.ipynb:total_env_steps=20000   # the others shown without outputs
"""
import argparse
import ast
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import time
import warnings
from pathlib import Path

import nbformat
from nbformat.validator import MissingIDFieldWarning

warnings.filterwarnings("ignore", category=MissingIDFieldWarning)   # nbs/ is committed without cell ids

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
NBS = ROOT / "nbs"
KERNEL = "ddrl-lab"
# The cache key is this, the notebook's bytes and its --param values: bump it (or delete build/docs/executed/)
# to re-execute every notebook, e.g. after a library change that the notebooks' own bytes do not show.
EXEC_VERSION = b"ddrl-lab-docs-1"
# Rendered without executing, with this reason on the page (paths relative to nbs/).
NOT_EXECUTED = {
    "experiments/atari.ipynb": "its default budget is 2 minutes of Pong for each of 4 topologies (over 8 minutes)",
    "experiments/replay.ipynb": "its default grid trains DQN for up to 100,000 env steps in each of up to 8 "
                                "replay configurations (about 15 minutes on 2 cores)",
    "experiments/live_dashboard.ipynb": "it is a live dashboard (sliders steering a running job): "
                                        "its widgets only work in a running kernel",
    "experiments/recurrent.ipynb": "its default runs are 4 policies x 200,000 env steps on the device and 6 "
                                   "asynchronous Ray jobs of 100,000 (about 10 minutes on 2 cores)",
    "experiments/continuous.ipynb": "its default studies train SAC on HalfCheetah-v5 for 300,000 env steps in "
                                    "each of 6 runs (hours on 2 cores)",
}
PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
DIRECTIVE = re.compile(r"^\s*#\|\s*([\w-]+)(.*)$")


class BuildError(Exception):
    pass


def layers() -> list:
    """The library's rooms and top-level modules in data-flow order, bottom layer first: the layers of the import
    contract (.importlinter), which lists them top first."""
    text = (ROOT / ".importlinter").read_text().split("layers =", 1)[1]
    lines = [re.findall(r"ddrl_lab\.(\w+)", line) for line in text.splitlines()]
    return [name for line in reversed(lines) for name in line]


def library() -> dict:
    "{room or '': [notebooks relative to nbs/]}: each room's notebooks in its folder's order, rooms bottom layer first."
    out = {}
    for name in layers():
        if (NBS / name).is_dir():
            out[name] = sorted(f"{name}/{p.name}" for p in (NBS / name).glob("*.ipynb"))
        elif (NBS / f"{name}.ipynb").exists():
            out.setdefault("", []).append(f"{name}.ipynb")
    return out


def notebooks() -> list:
    """Paths relative to nbs/: index first, then the library's notebooks (in data-flow order), the other notebooks of
    nbs/ itself, the experiments and the how-tos."""
    lib = [nb for nbs in library().values() for nb in nbs]
    rest = sorted(p.name for p in NBS.glob("*.ipynb") if p.name != "index.ipynb" and p.name not in lib)
    exps = sorted(f"experiments/{p.name}" for p in (NBS / "experiments").glob("*.ipynb"))
    howtos = sorted(f"howto/{p.name}" for p in (NBS / "howto").glob("*.ipynb"))
    return ["index.ipynb"] * (NBS / "index.ipynb").exists() + lib + rest + exps + howtos


# A newcomer's path through the site, in the navigation before the library: (title, notebook or page). The
# how-tos in the order a newcomer meets them; the notebooks named here are not listed again under Library or
# Experiments.
GETTING_STARTED = "experiments/quickstart.ipynb"
CHOOSER = "studies/01_chooser.ipynb"
RESULTS = "results.ipynb"
HOWTOS = ["howto/steer_a_live_job.ipynb", "howto/compare_sync_and_planes.ipynb", "howto/train_atari.ipynb",
          "howto/your_own_env.ipynb", "howto/ray_cluster.ipynb", "howto/gpu.ipynb"]


def navigation(src: Path) -> list:
    "The site's navigation: the newcomer's path, then the library, the experiments and the API reference."
    named = {"index.ipynb", GETTING_STARTED, CHOOSER, RESULTS, *HOWTOS}
    rooms = library()
    return [{"Home": "index.ipynb"},
            {"Getting started": GETTING_STARTED},
            {"Which topology?": CHOOSER},
            {"How-to": [{title(r): r} for r in HOWTOS]},
            {"Results": RESULTS},
            {"Design contract": "design.md"},
            {"Library": [{title(r): r} for r in rooms.get("", []) if r not in named]
                        + [{room: [{title(r): r} for r in nbs if r not in named]} for room, nbs in rooms.items() if room]},
            {"Experiments": [{title(r): r} for r in notebooks() if r.startswith("experiments/") and r not in named]},
            {"API reference": api_pages(src)}]


def title(rel: str) -> str:
    "The notebook's first `# ` heading, inline code kept as text (mkdocs-jupyter's own title drops it)."
    for cell in nbformat.read(NBS / rel, as_version=4).cells:
        for line in cell.source.splitlines() if cell.cell_type == "markdown" else []:
            if line.startswith("# "): return line[2:].replace("`", "").strip()
    return rel


def directives(source: str) -> dict:
    "nbdev's `#| name value` lines of a cell."
    return {m[1]: m[2].strip() for m in map(DIRECTIVE.match, source.splitlines()) if m}


def skipped(cell) -> bool:
    "Cells nbdev_test leaves alone by default (settings.ini's `tst_flags`: `#| slow`, `#| learning`) and `#| eval: false`."
    d = directives(cell.source)
    return cell.cell_type == "code" and ("slow" in d or "learning" in d or d.get("eval", "").lstrip(":").strip() == "false")


# -- 1. execution, cached by content ----------------------------------------------------------------
def execute(rel: str, build: Path, timeout: int, params: dict = None):
    "The executed notebook for nbs/`rel` (`params` injected after its `parameters` cell), and whether it was cached."
    src = NBS / rel
    key = hashlib.sha256(EXEC_VERSION + src.read_bytes() + repr(sorted((params or {}).items())).encode()).hexdigest()[:16]
    stem = rel.removesuffix(".ipynb")
    out = build / "executed" / f"{stem}.{key}.ipynb"
    if out.exists():
        return nbformat.read(out, as_version=4), True

    from nbclient import NotebookClient
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    try:
        KernelSpecManager().get_kernel_spec(KERNEL)
    except NoSuchKernel:
        raise BuildError(f"no Jupyter kernel {KERNEL!r}: run `make install`, or "
                         f"`{sys.executable} -m ipykernel install --sys-prefix --name {KERNEL}`") from None
    nb = nbformat.read(src, as_version=4)
    if params:
        at = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
        if not at: raise BuildError(f"nbs/{rel} has no cell tagged `parameters` to override")
        nb.cells.insert(at[0] + 1, nbformat.from_dict(dict(   # as papermill does; no id (nbformat 4.4)
            cell_type="code", metadata={"tags": ["injected-parameters"]}, execution_count=None, outputs=[],
            source="# Parameters injected by docs/build.py\n" + "\n".join(f"{k} = {v!r}" for k, v in params.items()))))
    for cell in nb.cells:
        if skipped(cell):
            cell.metadata.setdefault("tags", []).append("skip-execution")
    work = build / "work" / stem          # the notebook's working directory: its runs/ and files land here
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=timeout, startup_timeout=120, allow_errors=False,
                            store_widget_state=False, resources={"metadata": {"path": str(work)}})
    log = build / "logs" / f"{stem}.log"   # the kernel process's own output (ALE's banner, Ray, crashes)
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(log, "w") as f:
            client.execute(env=dict(os.environ, PLOTLY_RENDERER="plotly_mimetype"),   # figures as JSON only
                           stdout=f, stderr=f)
    except Exception as e:               # CellExecutionError, DeadKernelError, CellTimeoutError, ...
        failed = build / "failed" / rel
        failed.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, failed)
        raise BuildError(f"nbs/{rel} failed to execute ({type(e).__name__}); the partly executed copy is "
                         f"{failed}, the kernel's log {log}\n{ANSI.sub('', str(e))[-3000:]}") from None
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "skip-execution" in tags:
            tags.remove("skip-execution")
            if not tags: del cell.metadata["tags"]
    for old in out.parent.glob(f"{Path(stem).name}.*.ipynb"):   # older copies of the same notebook
        old.unlink()
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    shutil.rmtree(work, ignore_errors=True)
    return nb, False


# -- 2. the site's copy of a notebook ---------------------------------------------------------------
def figure_html(fig: dict) -> str:
    "A plotly figure as JSON for assets/figures.js ('<' escaped, so no '</script>' can end it early)."
    text = json.dumps(fig).replace("<", "\\u003c")
    return f'<script type="application/json" class="ddrl-figure">{text}</script>'


PROGRESS_BAR = re.compile(r"\d+%\|")      # tqdm's text form of its widget: "name:  0%|          | 0.00/100k"
WIDGET_NOTE = ('<p class="ddrl-widget-note"><em>An interactive widget: it works in a running notebook '
               '(JupyterLab), not on this static page.</em></p>')


def for_site(nb, note: str = None):
    """Directives stripped, `#| hide` cells dropped, stderr dropped, plotly, GIF and widget outputs replaced (progress
    bars dropped: a static page only has their first frame); `note` after the title."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            if "hide" in directives(cell.source): continue
            cell.source = "\n".join(l for l in cell.source.splitlines() if not DIRECTIVE.match(l)).strip("\n")
            if not cell.source.strip(): continue
            outputs = []
            for out in cell.get("outputs", []):
                if out.get("name") == "stderr": continue   # banners and warnings (ALE, Ray's token notice)
                data = out.get("data", {})
                if PLOTLY_MIME in data:
                    out["data"] = {"text/html": figure_html(data[PLOTLY_MIME])}
                elif "image/gif" in data:                       # an episode: nbconvert's HTML drops GIFs
                    gif = "".join(data["image/gif"].split())
                    out["data"] = {"text/html": f'<img alt="an episode" src="data:image/gif;base64,{gif}">'}
                elif WIDGET_MIME in data:
                    if PROGRESS_BAR.search(str(data.get("text/plain", ""))): continue   # a tqdm bar, as it began
                    out["data"] = {"text/html": WIDGET_NOTE}
                outputs.append(out)
            if "outputs" in cell: cell.outputs = outputs
        cells.append(cell)
    if note:
        at = 1 if cells and cells[0].cell_type == "markdown" and cells[0].source.lstrip().startswith("# ") else 0
        cells.insert(at, nbformat.from_dict(dict(cell_type="markdown", metadata={}, source=(   # no id: nbformat 4.4
            f'<div class="admonition note"><p class="admonition-title">Shown without outputs</p><p>{note}</p></div>'))))
    nb.cells = cells
    return nb


# -- 3. API pages, assets, mkdocs -------------------------------------------------------------------
def modules() -> list:
    "The library's modules, dotted below ddrl_lab (`replay.shard`); packages' `__init__` and `_modidx` left out."
    lib = ROOT / "ddrl_lab"
    parts = [p.relative_to(lib).with_suffix("").parts for p in lib.rglob("*.py")]
    return sorted(".".join(q) for q in parts if not any(x.startswith("_") for x in q))


def api_pages(src: Path) -> list:
    (src / "api").mkdir()
    for m in modules():
        (src / "api" / f"{m}.md").write_text(f"# ddrl_lab.{m}\n\n::: ddrl_lab.{m}\n")
    return [{f"ddrl_lab.{m}": f"api/{m}.md"} for m in modules()]


def copy_assets(src: Path):
    import plotly
    import jupyter_server_mathjax
    assets = src / "assets"
    shutil.copytree(DOCS / "assets", assets, ignore=shutil.ignore_patterns("*.js"))
    (assets / "javascripts").mkdir()
    shutil.copy(DOCS / "assets" / "figures.js", assets / "javascripts" / "figures.js")
    shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", assets / "javascripts")
    shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static", assets / "mathjax")
    shutil.copy(DOCS / "assets" / "mathjax-local.js", assets / "mathjax" / "config" / "local.js")


def build(site: Path, build_dir: Path, to_execute, timeout: int, params: dict = None) -> dict:
    "Build the site; `params`: {notebook: {name: value}} for notebooks with a `parameters` cell."
    t0, times = time.monotonic(), {}
    src = build_dir / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    failed = []
    for rel in notebooks():
        if rel in to_execute:
            t = time.monotonic()
            try:
                nb, cached = execute(rel, build_dir, timeout, (params or {}).get(rel))
            except BuildError as e:      # go on with the others, so that one build names every failure
                print(f"docs: {e}", file=sys.stderr, flush=True)
                failed.append(rel)
                continue
            times[rel] = None if cached else time.monotonic() - t
            print(f"docs: nbs/{rel}: " + ("cached" if cached else f"executed in {times[rel]:.1f} s"), flush=True)
            note = None
        else:
            nb = nbformat.read(NBS / rel, as_version=4)
            note = (f"This notebook is not executed for the docs: {NOT_EXECUTED[rel]}. Run it in JupyterLab, or "
                    f"with papermill, to see its outputs.") if rel in NOT_EXECUTED else \
                   "This build of the docs did not execute this notebook."
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(for_site(nb, note), src / rel)
    if failed:
        raise BuildError(f"{len(failed)} notebook(s) failed to execute, no site built: "
                         + ", ".join(f"nbs/{r}" for r in failed))
    nav = navigation(src)
    copy_assets(src)
    shutil.copy(DOCS / "design.md", src / "design.md")          # the design contract, a page of the site
    shutil.copytree(DOCS / "images", src / "images")            # the README's pictures, for the index page

    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    print("docs: rendering the site with mkdocs", flush=True)
    cfg = load_config(str(DOCS / "mkdocs.yml"), docs_dir=str(src), site_dir=str(site), nav=nav)
    cfg.plugins["mkdocs-jupyter"].config["cache_dir"] = str(build_dir / "render-cache")
    mkdocs_build(cfg)
    print(f"docs: {site / 'index.html'} ({time.monotonic() - t0:.0f} s)")
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site-dir", type=Path, default=ROOT / "site", help="where the site goes (default: site/)")
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build" / "docs",
                    help="executed notebooks (the cache), the generated mkdocs sources (default: build/docs/)")
    ap.add_argument("--execute", nargs="*", metavar="NB",
                    help="execute only these notebooks (relative to nbs/, e.g. index.ipynb experiments/replay.ipynb); "
                         "the others are shown without outputs. Default: all but " + ", ".join(NOT_EXECUTED))
    ap.add_argument("--param", action="append", default=[], metavar="NB:NAME=VALUE",
                    help="run NB with NAME = VALUE (a Python literal) after its parameters cell, e.g. "
                         "experiments/shadow.ipynb:total_env_steps=20000 (repeatable)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds a cell may run (default 1800)")
    args = ap.parse_args(argv)
    params = {}
    for p in args.param:
        m = re.fullmatch(r"([^:]+\.ipynb):(\w+)=(.*)", p)
        if not m: ap.error(f"--param {p!r}: expected NB:NAME=VALUE")
        try: params.setdefault(m[1], {})[m[2]] = ast.literal_eval(m[3])
        except (ValueError, SyntaxError): ap.error(f"--param {p!r}: {m[3]!r} is not a Python literal")
    logging.basicConfig(level=logging.WARNING, format="docs: %(levelname)s %(name)s: %(message)s")
    all_nbs = notebooks()
    if args.execute is None:
        to_execute = set(all_nbs) - set(NOT_EXECUTED)
    else:
        unknown = set(args.execute) - set(all_nbs)
        if unknown: ap.error(f"no such notebook under nbs/: {', '.join(sorted(unknown))}")
        to_execute = set(args.execute)
    if set(params) - to_execute: ap.error(f"--param for a notebook not executed: {', '.join(set(params) - to_execute)}")
    try:
        build(args.site_dir.resolve(), args.build_dir.resolve(), to_execute, args.timeout, params)
    except BuildError as e:
        sys.exit(f"docs: {e}")


if __name__ == "__main__":
    main()
