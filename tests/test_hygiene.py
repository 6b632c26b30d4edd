"""The notebooks are the source: the library and README must match them, and they must be clean.
Every notebook in nbs/ also runs as a test here (slow cells included)."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, ROOT

# (the index, the chooser and the results page run in tests/test_docs.py's build, which fails on any error there)
IN_DOCS_BUILD = {"index.ipynb", "studies/01_chooser.ipynb", "results.ipynb"}
NOT_LIBRARY = {"experiments", "howto"}         # (folders of nbs/ whose notebooks run as studies and pages: test_studies, test_docs)
# the library's notebooks, relative to nbs/: nbs/ itself and one folder per subpackage (their names are unique: nbdev_test
# picks files by name)
NOTEBOOKS = sorted(str(p.relative_to(ROOT / "nbs")) for p in (ROOT / "nbs").rglob("*.ipynb")
                   if p.relative_to(ROOT / "nbs").parts[0] not in NOT_LIBRARY
                   and str(p.relative_to(ROOT / "nbs")) not in IN_DOCS_BUILD)
ALL_NOTEBOOKS = sorted((ROOT / "nbs").rglob("*.ipynb"))


def _copy_project(dst: Path) -> Path:
    for name in ("settings.ini", "setup.py", "README.md"):
        shutil.copy(ROOT / name, dst / name)
    shutil.copytree(ROOT / "nbs", dst / "nbs")
    shutil.copytree(ROOT / "ddrl_lab", dst / "ddrl_lab", ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_library_is_exported_from_notebooks(tmp_path):
    proj = _copy_project(tmp_path)
    subprocess.run([BIN / "nbdev_export"], cwd=proj, check=True, capture_output=True)
    lib = ROOT / "ddrl_lab"
    stale = [str(p.relative_to(lib)) for p in sorted(lib.rglob("*.py"))
             if (proj / "ddrl_lab" / p.relative_to(lib)).read_text() != p.read_text()]
    added = [str(p.relative_to(proj)) for p in (proj / "ddrl_lab").rglob("*.py") if not (ROOT / p.relative_to(proj)).exists()]
    assert not stale and not added, f"run nbdev_export: out of step with the notebooks: {stale + added}"


def test_notebooks_are_clean(tmp_path):
    proj = _copy_project(tmp_path)
    subprocess.run([BIN / "nbdev_clean"], cwd=proj, check=True, capture_output=True)
    dirty = [str(p.relative_to(ROOT)) for p in ALL_NOTEBOOKS
             if (proj / p.relative_to(ROOT)).read_bytes() != p.read_bytes()]
    assert not dirty, f"run nbdev_clean: {dirty}"
    for p in ALL_NOTEBOOKS:
        assert set(json.loads(p.read_text())["metadata"]) <= {"kernelspec"}, f"{p.name}: stray notebook metadata"
        for cell in json.loads(p.read_text())["cells"]:
            assert not cell.get("outputs") and cell.get("execution_count") is None, f"{p.name} has outputs"
            assert set(cell.get("metadata", {})) <= {"tags"}, f"{p.name}: stray cell metadata {cell['metadata']}"


def test_readme_is_generated_from_index(tmp_path):
    subprocess.run([BIN / "jupyter", "nbconvert", "--log-level", "WARN", "--to", "markdown", "--output-dir", str(tmp_path),
                    "--output", "README", str(ROOT / "nbs" / "index.ipynb")], check=True, capture_output=True)
    assert (tmp_path / "README.md").read_text() == (ROOT / "README.md").read_text(), "run make readme"


def test_quickstart_has_a_parameters_cell():
    nb = json.loads((ROOT / "nbs" / "experiments" / "quickstart.ipynb").read_text())
    assert any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])


# The notebooks whose tests run whole jobs for seconds to tens of seconds (`nbdev_test --timing` here, 2026-12-06: the
# plan page's calibrations 88 s, the doctor's diagnosed runs 38 s, ondevice/00_actor_critic 30 s, run/02_job 29 s, runtime 22 s,
# learners/02_algorithms 19 s, loops/03_barrier and ondevice/01_dqn 16 s, loops/08_device 13 s, loops/06_central 12 s,
# analysis/01_episodes, loops/05_replay, ui/02_dashboard 10 s, bench/00_harness 9 s; studies/04_tune (a Ray Tune study
# of four trials, 2026-12-07) 40 s; every other notebook 10 s or less, most
# under 5 s): the slow tier runs them.
HEAVY_NOTEBOOKS = {"learners/02_algorithms.ipynb", "ondevice/00_actor_critic.ipynb", "ondevice/01_dqn.ipynb",
                   "analysis/01_episodes.ipynb", "runtime.ipynb", "loops/03_barrier.ipynb", "loops/05_replay.ipynb",
                   "loops/06_central.ipynb", "loops/08_device.ipynb", "run/02_job.ipynb", "ui/02_dashboard.ipynb",
                   "ui/01_plan_page.ipynb", "bench/00_harness.ipynb", "analysis/02_doctor.ipynb",
                   "studies/04_tune.ipynb", "studies/05_pairs.ipynb",
                   "studies/06_page.ipynb", "ui/03_study_view.ipynb"}


def _run_notebooks(names: list) -> None:
    """Each notebook's cells are its unit tests; slow cells run too (its `#| learning` cells: below). One `nbdev_test`
    runs `names`, two at a time (the machine's two cores; about half the time of one process per notebook); its
    output names every notebook that failed, with the cell."""
    others = sorted(set(NOTEBOOKS) - set(names)) + sorted(IN_DOCS_BUILD)
    skip = "|".join(re.escape(Path(n).stem) for n in others)
    folders = "|".join(sorted(NOT_LIBRARY))
    r = subprocess.run([BIN / "nbdev_test", "--path", "nbs", "--flags", "slow", "--n_workers", "2", "--timing",
                        "--skip_file_re", rf"^({skip}|[_.].*)\.ipynb$", "--skip_folder_re", rf"^({folders}|[_.].*)$"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-6000:]
    ran = sorted(line.split(":")[0] for line in r.stdout.splitlines() + r.stderr.splitlines() if line.endswith(" secs"))
    expected = sorted(Path(n).name for n in names)
    assert ran == expected, f"nbdev_test ran {len(ran)} notebooks, expected {len(names)}: {set(expected) ^ set(ran)}"


def test_notebooks_run():
    "Every notebook of nbs/ but the heavy ones (and the three the docs build runs) executes without an error."
    assert HEAVY_NOTEBOOKS < set(NOTEBOOKS), HEAVY_NOTEBOOKS - set(NOTEBOOKS)
    _run_notebooks(sorted(set(NOTEBOOKS) - HEAVY_NOTEBOOKS))


@pytest.mark.slow
def test_heavy_notebooks_run():
    "The notebooks whose tests run whole jobs, in the slow tier: with test_notebooks_run, every notebook runs."
    _run_notebooks(sorted(HEAVY_NOTEBOOKS))


def _nbdev_test(name: str, flags: str) -> None:
    r = subprocess.run([BIN / "nbdev_test", "--path", f"nbs/{name}", "--flags", flags], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]


LEARNING_NOTEBOOKS = [n for n in NOTEBOOKS if '"#| learning' in (ROOT / "nbs" / n).read_text()]   # (a cell's first line, as JSON holds it)


@pytest.mark.learning
@pytest.mark.parametrize("name", LEARNING_NOTEBOOKS)
def test_notebook_learning_cells_run(name):
    "A notebook's long learning runs (cells flagged `#| learning`: more seeds, full solves) with the rest of it."
    _nbdev_test(name, "slow learning")


def _declared() -> set:
    "Distribution names in settings.ini's requirements, dev_requirements, bench_requirements and gpu_requirements (normalized)."
    import configparser, re
    cfg = configparser.ConfigParser(delimiters=["="]); cfg.read(ROOT / "settings.ini")
    reqs = " ".join(cfg["DEFAULT"].get(k, "") for k in ("requirements", "dev_requirements", "bench_requirements", "gpu_requirements")).split()
    return {re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[ ;]", r)[0]).lower() for r in reqs}


def test_every_imported_package_is_declared():
    "Each third-party module the library imports (at the top or inside a function) comes from a declared distribution."
    import ast, re, sys
    from importlib.metadata import packages_distributions
    mods = set()
    for p in (ROOT / "ddrl_lab").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import): mods |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module: mods.add(node.module.split(".")[0])
    third = sorted(m for m in mods if m not in sys.stdlib_module_names and m != "ddrl_lab")
    dists, declared = packages_distributions(), _declared()
    assert {"torch", "PIL", "tqdm", "IPython"} <= set(third)          # (the scan sees the imports)
    undeclared = [m for m in third if not any(re.sub(r"[-_.]+", "-", d).lower() in declared for d in dists.get(m, [m]))]
    assert not undeclared, f"imported by ddrl_lab but not declared in settings.ini: {undeclared}"


def test_the_notebooks_left_to_the_docs_build_run_there():
    from test_docs import EXECUTED
    assert IN_DOCS_BUILD <= set(EXECUTED), IN_DOCS_BUILD - set(EXECUTED)
