"""The library reads like its notebooks say: short lines, one statement per line, modules with one job each,
and one place that builds a model and touches its layers. Read from the exported modules with `ast`."""
import ast
import re
from collections import Counter

from conftest import ROOT

MODULES = sorted(p for p in (ROOT / "ddrl_lab").rglob("*.py") if p.name != "_modidx.py")


def _statement_lines(tree: ast.AST) -> Counter:
    "How many statements start on each line (a one-line `if x: y` counts two)."
    return Counter(node.lineno for node in ast.walk(tree) if isinstance(node, ast.stmt))


def test_lines_are_short_and_hold_one_statement():
    long_lines, crowded = [], []
    for p in MODULES:
        text = p.read_text()
        name = p.relative_to(ROOT)
        long_lines += [f"{name}:{i}" for i, line in enumerate(text.splitlines(), 1) if len(line) > 120]
        crowded += [f"{name}:{n}" for n, k in _statement_lines(ast.parse(text)).items() if k > 1]
    # nbdev writes each module's `__all__` on one line: those are most of the long ones
    assert len(long_lines) <= 50, f"{len(long_lines)} lines over 120 characters: {long_lines[:10]}"
    assert len(crowded) <= 25, f"{len(crowded)} lines with more than one statement: {crowded[:10]}"


def test_each_module_is_small_and_says_its_job():
    for p in MODULES:
        text = p.read_text()
        assert len(text.splitlines()) <= 600, f"{p.name} has {len(text.splitlines())} lines (at most 600)"
        doc = ast.get_docstring(ast.parse(text))
        assert doc and text.startswith('"""'), f"{p.name}: its first line should say its one job"


def test_one_constructor_and_no_reaching_into_a_model():
    reach = re.compile(r"\._x\(|\.actor\(|\.critic\(")
    build = re.compile(r"\b(ActorCritic|QNetwork|build_model|build_q_model)\(")
    for p in MODULES:
        if p.name == "models.py":
            continue
        text = p.read_text()
        assert not reach.search(text), f"{p.name} touches a model's layers: use the policy interface"
        assert not build.search(text), f"{p.name} builds a model: `models.make_policy` is the only constructor"
