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
IN_DOCS_BUILD = {"index.ipynb", "11j_chooser.ipynb", "results.ipynb"}
NOTEBOOKS = sorted(p.name for p in (ROOT / "nbs").glob("*.ipynb") if p.name not in IN_DOCS_BUILD)
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
    stale = [p.name for p in sorted((ROOT / "ddrl_lab").glob("*.py"))
             if (proj / "ddrl_lab" / p.name).read_text() != p.read_text()]
    added = [p.name for p in (proj / "ddrl_lab").glob("*.py") if not (ROOT / "ddrl_lab" / p.name).exists()]
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
# plan page's calibrations 88 s, the doctor's diagnosed runs 38 s, 09_ondevice 30 s, 12_job 29 s, 11_runtime 22 s,
# 07a 19 s, 11b and 09c 16 s, 11i 13 s, 11e 12 s, 10a, 11d, 13_dashboard 10 s, 16_bench 9 s; every other notebook 10 s or
# less, most under 5 s): the slow tier runs them.
HEAVY_NOTEBOOKS = {"07a_algorithms.ipynb", "09_ondevice.ipynb", "09c_ondevice_dqn.ipynb", "10a_episodes.ipynb",
                   "11_runtime.ipynb", "11b_barrier_loop.ipynb", "11d_replay_loop.ipynb", "11e_central_loop.ipynb",
                   "11i_device_loop.ipynb", "12_job.ipynb", "13_dashboard.ipynb", "13b_plan_page.ipynb", "16_bench.ipynb",
                   "17_doctor.ipynb"}


def _run_notebooks(names: list) -> None:
    """Each notebook's cells are its unit tests; slow cells run too (its `#| learning` cells: below). One `nbdev_test`
    runs `names`, two at a time (the machine's two cores; about half the time of one process per notebook); its
    output names every notebook that failed, with the cell."""
    others = sorted(set(NOTEBOOKS) - set(names)) + sorted(IN_DOCS_BUILD)
    skip = "|".join(re.escape(n.removesuffix(".ipynb")) for n in others)
    r = subprocess.run([BIN / "nbdev_test", "--path", "nbs", "--flags", "slow", "--n_workers", "2", "--timing",
                        "--skip_file_re", rf"^({skip}|[_.].*)\.ipynb$", "--skip_folder_re", ".*"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-6000:]
    ran = sorted(line.split(":")[0] for line in r.stdout.splitlines() + r.stderr.splitlines() if line.endswith(" secs"))
    assert ran == sorted(names), f"nbdev_test ran {len(ran)} notebooks, expected {len(names)}: {set(names) ^ set(ran)}"


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
    "Distribution names in settings.ini's requirements, dev_requirements and bench_requirements (normalized)."
    import configparser, re
    cfg = configparser.ConfigParser(delimiters=["="]); cfg.read(ROOT / "settings.ini")
    reqs = " ".join(cfg["DEFAULT"].get(k, "") for k in ("requirements", "dev_requirements", "bench_requirements")).split()
    return {re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[ ;]", r)[0]).lower() for r in reqs}


def test_every_imported_package_is_declared():
    "Each third-party module the library imports (at the top or inside a function) comes from a declared distribution."
    import ast, re, sys
    from importlib.metadata import packages_distributions
    mods = set()
    for p in (ROOT / "ddrl_lab").glob("*.py"):
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
