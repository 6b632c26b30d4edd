"""The import graph of ddrl_lab, read from its modules with `ast`: modules, folders, imports at module level and
inside functions, and the circles among them. The same script measures the house before and after a restructure:

    python docs/import_graph.py [ROOT] [--edges]
"""
import ast
import sys
from collections import defaultdict
from pathlib import Path


def _module_name(path: Path, pkg: Path) -> str:
    parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom, here: str, is_pkg: bool) -> list:
    "The ddrl_lab modules one `from ... import ...` names (a name may be a module of a package)."
    if node.level:
        base = here.split(".") if is_pkg else here.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    return [mod] + [f"{mod}.{a.name}" for a in node.names]


def imports(pkg: Path) -> tuple:
    "(modules, [(importer, imported, in_function)]) for the package at `pkg`."
    modules = {_module_name(p, pkg): p for p in pkg.rglob("*.py") if p.name != "_modidx.py"}
    edges = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        inside = set()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inside.update(id(n) for n in ast.walk(fn) if n is not fn)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = _resolve(node, name, path.name == "__init__.py")
            else:
                continue
            found = {t for t in targets if t in modules and t != name and t != "ddrl_lab"}
            for t in sorted(found):
                edges.append((name, t, id(node) in inside))
    return modules, edges


def circles(nodes, edges) -> list:
    "Strongly connected components of more than one module (Tarjan)."
    graph = defaultdict(set)
    for a, b, _ in edges:
        graph[a].add(b)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv) -> None:
    root = Path(argv[0]) if argv and not argv[0].startswith("--") else Path(__file__).resolve().parents[1]
    pkg = root / "ddrl_lab"
    modules, edges = imports(pkg)
    files = [m for m, p in modules.items() if p.name != "__init__.py"]
    top = [m for m, p in modules.items() if p.parent == pkg and p.name != "__init__.py"]
    folders = sorted({".".join(m.split(".")[:2]) for m, p in modules.items() if p.parent != pkg})
    inner = [e for e in edges if e[2]]
    print(f"modules {len(files)}; directly in ddrl_lab/ {len(top)}; subpackages {len(folders)}: {', '.join(folders)}")
    print(f"imports of ddrl_lab modules: {len(edges) - len(inner)} at module level, {len(inner)} inside functions")
    for label, es in (("module-level imports only", [e for e in edges if not e[2]]), ("all imports", edges)):
        cs = circles(modules, es)
        print(f"circles ({label}): {len(cs)}" + "".join(f"\n  {' '.join(c)}" for c in cs))
    if "--edges" in argv:
        for a, b, f in sorted(inner):
            print(f"  in a function: {a} -> {b}")


if __name__ == "__main__":
    main(sys.argv[1:])
