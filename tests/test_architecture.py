"""The engine's import graph (issue #32): imports flow one way, the engine never imports the UI.

The graph is read with ``ast`` from every module under ``hiqa/``: top-level imports, imports
inside functions and ``if TYPE_CHECKING:`` imports alike (a type-only circle is still a circle
for a reader).  ``from . import x`` depends on module ``x``; ``from .pkg import name`` on
``pkg`` and, when ``name`` is a module, on it too.

Beyond having no circle, the imports follow the pipeline (``LAYERS``): a part imports parts of
its own layer or below, never one further along.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "hiqa"
UI_PACKAGES = {"streamlit", "plotly"}
LAYERS = [
    # shared leaves: types, errors, settings, file helpers, the process's handle cache, the
    # OpenAI-compatible client (the formatter, keywords and answers all call it)
    {"errors", "checks", "settings", "model", "files", "faults", "tokenize", "handles", "llm"},
    {"formats"},               # Markdown Formatter: every source -> Markdown + heading tree
    {"augment"},               # HCA: cascaded paths, splitting
    {"embed", "keywords", "version"},  # embedders; what tells a document apart
    {"index"},                 # registry, store, payload, lexical index, ingest, repair
    {"retrieve"},              # params, routes, fusion
    {"answer"},                # cited and extractive answers
    {"collection"},            # the façade
    {"eval", "demo"},          # evaluation runs on collections; the demo builds one
    {"cli"},
    {""},                      # the package root re-exports public names
]


def modules(root: Path = ENGINE) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def import_graph(mods: dict[str, Path]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module -> engine modules it imports, module -> third-party top-level packages)."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    external: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in mods]
                targets = subs if node.module is None and subs else [module, *subs]
            else:
                continue
            for target in targets:
                if target in mods:
                    if target != name:
                        graph[name].add(target)
                elif not target.startswith("hiqa"):
                    external[name].add(target.split(".")[0])
    return graph, external


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_the_graph_reader_sees_circles_of_every_kind(tmp_path):
    pkg = tmp_path / "hiqa"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import f\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from .a import g\n")  # a type-only import closes a circle
    (pkg / "c.py").write_text("def f():\n    from . import d\n")  # an import in a function
    (pkg / "d.py").write_text("import hiqa.c\nimport plotly.express\n")
    (pkg / "sub" / "__init__.py").write_text("from . import e\n")
    (pkg / "sub" / "e.py").write_text("from ..a import f\n")
    graph, external = import_graph(modules(pkg))
    assert sorted(map(sorted, circles(graph))) == [["hiqa.a", "hiqa.b"], ["hiqa.c", "hiqa.d"]]
    assert graph["hiqa.sub"] == {"hiqa.sub.e"} and graph["hiqa.sub.e"] == {"hiqa.a"}
    assert external["hiqa.d"] == {"plotly"}


def test_engine_imports_flow_one_way():
    graph, _ = import_graph(modules())
    assert circles(graph) == []


def layer(module: str) -> int:
    part = module.split(".")[1] if "." in module else ""
    return next(i for i, names in enumerate(LAYERS) if part in names)


def test_imports_follow_the_pipeline():
    graph, _ = import_graph(modules())
    upward = sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets
                    if layer(t) > layer(m))
    assert upward == []


def test_the_layers_name_every_part():
    parts = {m.split(".")[1] for m in modules() if "." in m}
    assert parts == set().union(*LAYERS) - {""}


def test_engine_never_imports_the_ui():
    _, external = import_graph(modules())
    ui = {m: pkgs & UI_PACKAGES for m, pkgs in external.items() if pkgs & UI_PACKAGES}
    assert ui == {}


MAX_MODULE_LINES, MAX_CLASS_LINES, MAX_FACADE_LINES = 600, 250, 200


def test_every_module_and_class_reads_in_one_sitting():
    too_long = []
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            too_long.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    too_long.append(f"{name}.{node.name}: class of {size} lines")
    assert too_long == []
    facade = (ENGINE / "collection.py").read_text(encoding="utf-8").splitlines()
    assert len(facade) <= MAX_FACADE_LINES
