"""The docs site in a real browser: docs/build.py builds it into a temporary folder (the index and the newcomer's
path executed: quickstart, chooser, how-tos, results; the others shown without outputs), a stdlib http.server serves it
on 127.0.0.1 and headless Chromium (Playwright, the system's chromium) opens pages. No console errors, no
request to any other host (plotly.js and MathJax come from the site), the figures are drawn, every link
inside the site resolves, and the API reference lists the functions of a module."""
import functools
import http.server
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urldefrag, urlsplit

import pytest

from conftest import ROOT
from test_browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium

# Executed by the test's build: the index and the newcomer's path: the quickstart (in-process), the chooser, the six
# how-tos (about 90 s together: this build is where they run) and the results. The quickstart and the planes how-to
# draw plotly figures; the other notebooks are shown without outputs.
FIGURES = {"experiments/quickstart.ipynb": 2, "howto/compare_sync_and_planes.ipynb": 1}   # notebook: figures at least
NEWCOMER = ["experiments/quickstart.ipynb", "studies/01_chooser.ipynb", "howto/steer_a_live_job.ipynb",
            "howto/compare_sync_and_planes.ipynb", "howto/train_atari.ipynb", "howto/your_own_env.ipynb",
            "howto/ray_cluster.ipynb", "howto/gpu.ipynb", "results.ipynb"]
IMAGES = {"index.html": 3, "experiments/quickstart.html": 1, "howto/steer_a_live_job.html": 1,   # page: images at least
          "howto/train_atari.html": 1}
EXECUTED = ["index.ipynb", *FIGURES, *NEWCOMER]
PARAMS = ["experiments/quickstart.ipynb:runtime='serial'", "experiments/quickstart.ipynb:total_env_steps=8192",
          "experiments/quickstart.ipynb:require_target=False"]   # (tests/test_papermill.py runs it to its target)
NAV = ["Getting started", "Which topology?", "How-to", "Results", "Design contract"]     # the newcomer's path, in order
MATH_PAGE = "objectives/00_losses.html"                                         # shown unexecuted; its formulas need MathJax
API_PAGE, API_NAMES = "api/config.load.html", ["ddrl_lab.config.load.load_config", "ddrl_lab.config.load.list_presets"]
DRAWN = "() => [...document.querySelectorAll('.js-plotly-plot')].filter(g => g.querySelector('.main-svg .trace')).length"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass


class _Server(http.server.ThreadingHTTPServer):
    "A browser that drops a connection it no longer needs is not an error of the site: no traceback on stderr."
    def handle_error(self, request, client_address): pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    "The site built and served: its base URL."
    tmp = tmp_path_factory.mktemp("docs")
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, ROOT / "docs" / "build.py", "--site-dir", tmp / "site", "--build-dir",
                        tmp / "build", "--execute", *EXECUTED, *(a for p in PARAMS for a in ("--param", p))],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"docs/build.py failed:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
    print(f"site built in {time.monotonic() - t0:.0f} s")
    server = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(tmp / "site")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _open(browser, url: str, base: str) -> tuple:
    "Open `url`; every request to another host is aborted and recorded. (page, problems seen)."
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    seen = {"external": [], "errors": [], "failed": []}
    def route(r):
        if r.request.url.startswith(base): r.continue_()
        else: seen["external"].append(r.request.url); r.abort()
    page.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and seen["errors"].append(m.text))
    page.on("pageerror", lambda e: seen["errors"].append(f"pageerror: {e}"))
    page.on("response", lambda r: r.status >= 400 and seen["failed"].append(f"{r.status} {r.url}"))
    page.goto(url, wait_until="load")
    return page, seen


def _links(page, base: str) -> set:
    "The site's own pages and files this page links to, without fragments."
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    return {urldefrag(h).url for h in hrefs if h.startswith(base)}


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.mark.slow
@needs_chromium
def test_the_docs_site_in_chromium(site, browser):
    pages = {"index.html": 0, **{nb.replace(".ipynb", ".html"): 0 for nb in NEWCOMER}, "design.html": 0,
             **{nb.replace(".ipynb", ".html"): n for nb, n in FIGURES.items()}, MATH_PAGE: 0, API_PAGE: 0}
    links = set()
    for path, min_figures in pages.items():
        page, seen = _open(browser, site + path, site)
        try:
            assert page.locator(".md-content").count() == 1, f"{path}: not a page of the site"
            if min_figures:
                sources = page.locator("script.ddrl-figure").count()      # the figures docs/build.py wrote
                assert sources >= min_figures, f"{path}: {sources} figures on the page, expected {min_figures}"
                page.wait_for_function(f"({DRAWN})() >= {sources}", timeout=30_000)
                assert page.locator(".js-plotly-plot").count() == sources
            images = page.locator(".md-content img")
            assert images.count() >= IMAGES.get(path, 0), f"{path}: {images.count()} images, expected {IMAGES[path]}"
            page.wait_for_function("() => [...document.querySelectorAll('.md-content img')].every("
                                   "i => i.complete && i.naturalWidth > 0)", timeout=30_000)
            if path == MATH_PAGE:
                page.wait_for_function("document.querySelectorAll('.MathJax, .MathJax_Display').length > 0", timeout=30_000)
            if path == API_PAGE:
                for name in API_NAMES:
                    assert page.locator(f"[id='{name}']").count() == 1, f"{path}: no entry for {name}"
                assert page.locator(".doc-function").count() >= len(API_NAMES)
            if path == "index.html":
                assert "ddrl_lab" in page.title()
                nav = page.eval_on_selector_all("nav a[href]", "els => els.map(e => e.getAttribute('href'))")
                assert any("experiments/" in h for h in nav) and any(h.startswith("api/") for h in nav), nav
                titles = page.eval_on_selector_all(".md-nav--primary > .md-nav__list > .md-nav__item",
                                                   "els => els.map(e => e.innerText.split('\\n')[0].trim())")
                assert [t for t in titles if t in NAV] == NAV, titles
            page.wait_for_load_state("networkidle")
            links |= _links(page, site)
        finally:
            page.close()
        assert not seen["external"], f"{path}: requests to other hosts: {seen['external'][:5]}"
        assert not seen["failed"], f"{path}: failed requests: {seen['failed'][:5]}"
        assert not seen["errors"], f"{path}: console errors: {seen['errors'][:5]}"
    assert len(links) > 40, f"too few links inside the site: {sorted(links)}"
    broken = [(u, s) for u in sorted(links) if (s := _status(u)) != 200]
    assert not broken, f"links inside the site that do not resolve: {broken}"


def test_a_failing_notebook_fails_the_build(tmp_path, monkeypatch, capsys):
    "Without a browser: a notebook whose cell raises fails the build, named, with its error; no site is written."
    import importlib.util
    import nbformat
    spec = importlib.util.spec_from_file_location("ddrl_lab_docs_build", ROOT / "docs" / "build.py")
    docs_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(docs_build)
    nbs = tmp_path / "nbs"
    (nbs / "experiments").mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Broken"),
                                         nbformat.v4.new_code_cell("raise ValueError('boom')")])
    nbformat.write(nb, nbs / "broken.ipynb")
    monkeypatch.setattr(docs_build, "NBS", nbs)
    with pytest.raises(docs_build.BuildError, match=r"nbs/broken.ipynb"):
        docs_build.build(tmp_path / "site", tmp_path / "build", {"broken.ipynb"}, timeout=60)
    assert "ValueError: boom" in capsys.readouterr().err
    assert not (tmp_path / "site").exists()
