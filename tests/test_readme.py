"""What a newcomer reads first is true: the README's first-screen pictures were written by the test suite (not by
hand), and the design contract in the repository (docs/design.md) names only config keys, commands and metrics
the code has."""
import ast
import dataclasses
import hashlib
import json
import re

from conftest import PROVENANCE, ROOT

README = (ROOT / "README.md").read_text()
DESIGN = (ROOT / "docs" / "design.md").read_text()


def _first_screen() -> str:
    "The README down to its 'Where next' section: what a visitor sees before scrolling far."
    return README.split("## Where next")[0]


def test_the_first_screen_shows_pictures_the_suite_wrote():
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", _first_screen())
    assert len(pictures) >= 3, pictures                                 # the dashboard, an episode, a return curve
    books = json.loads(PROVENANCE.read_text())
    for rel in pictures:
        path = ROOT / rel
        assert path.is_file() and path.stat().st_size > 1000, f"{rel}: missing or empty"
        entry = books.get(path.name)
        assert entry, f"{rel}: no entry in {PROVENANCE.relative_to(ROOT)}: put there by hand?"
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest(), (
            f"{rel} is not the file its writer published (edited by hand since {entry['date']}?)")
        test_file, test_name = entry["written_by"].split("::")
        source = (ROOT / test_file).read_text()
        names = {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}
        assert test_name in names, f"{rel}: written by {entry['written_by']}, which does not exist"
        assert f'"{path.name}"' in source, f"{test_file} never publishes {path.name}"


def test_the_first_screen_is_short_and_links_onward():
    first = _first_screen()
    assert len(first.splitlines()) <= 60, "the first screen grew past 60 lines"
    assert "make demo" in first and "make test" in first
    onward = README.split("## Where next")[1].split("\n## ")[0]
    for target in re.findall(r"\]\(([^)#]+)\)", onward):
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


def _design_section(title: str) -> str:
    return DESIGN.split(f"### {title}")[1].split("\n### ")[0]


def test_the_design_contract_names_only_config_keys_that_exist():
    from ddrl_lab.config.schema import SECTIONS
    text = _design_section("Config sections")
    named = dict(re.findall(r"`(\w+)` \(([^`]*?)\)[,.]\n", text, flags=re.S))
    assert set(named) == set(SECTIONS), f"sections named {sorted(named)}, the code has {sorted(SECTIONS)}"
    for section, body in named.items():
        fields = {f.name for f in dataclasses.fields(SECTIONS[section])}
        keys = {k for k in re.findall(r"(?:^|[,(]\s*)([a-z_0-9]+)", body.replace("\n", " ")) if k != "and"}
        missing = sorted(k for k in keys if k not in fields)
        assert not missing, f"docs/design.md names {section}.{missing}, which the config does not have"


def test_the_design_contract_names_the_commands_the_cli_has():
    from ddrl_lab.cli import build_parser
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    named = set(re.findall(r"`ddrl-lab (\w+)", _design_section("CLI")))
    assert named == set(sub.choices), f"docs/design.md lists {sorted(named)}, the CLI has {sorted(sub.choices)}"


def test_the_design_contract_names_metrics_the_code_writes():
    always = re.findall(r"`(\w+)`", _design_section("Metrics").split("When the part exists")[0])
    code = "\n".join(p.read_text() for p in (ROOT / "ddrl_lab").rglob("*.py"))
    missing = [m for m in always if not re.search(rf"\b{m}\b", code)]
    assert len(always) >= 8 and not missing, f"metrics named in docs/design.md that no module writes: {missing}"


def _slow_tier_in_readme() -> set:
    "The tests the README's *The test tiers* section says the slow tier holds (`tests/FILE.py::TEST`)."
    section = README.split("### The test tiers")[1].split("\n## ")[0]
    slow = section.split("**`make test-slow`, the slow tier**")[1].split("- **`make test-learning`**")[0]
    return set(re.findall(r"`(tests/test_\w+\.py::test_\w+)`", slow))


def _marked_slow() -> set:
    """The test functions the suite marks `slow` (`tests/FILE.py::TEST`), read from the test files with `ast` (no
    collection: seconds instead of a pytest run). The tiers are cut by whole functions: a `slow` mark anywhere else (a
    module's `pytestmark`, one parameter's `pytest.param(..., marks=...)`) fails here, so the scan sees every one."""
    marked, stray = set(), []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text())
        on = {id(d): f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for d in f.decorator_list}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and ast.unparse(node) == "pytest.mark.slow":
                if id(node) in on: marked.add(f"tests/{path.name}::{on[id(node)]}")
                else: stray.append(f"{path.name}:{node.lineno}")
    assert not stray, f"a slow mark that is not a whole test function's decorator: {stray}"
    return marked


def test_the_readme_lists_what_the_slow_tier_holds():
    "Nothing moves to the slow tier silently: the README's list is the set of test functions marked `slow`."
    listed, slow = _slow_tier_in_readme(), _marked_slow()
    assert len(slow) >= 10, slow                                          # (the scan sees the markers)
    assert listed == slow, f"README lists but not marked: {sorted(listed - slow)}; marked but not listed: {sorted(slow - listed)}"
