"""The package's import graph, read from the source (every import, at module level or inside a
function): no two modules import each other, directly or around a circle, and imports go one way
through the layers — settings <- wire <- storage <- broker <- the HTTP side (console) <- the
tools on top (testing, cli, healthcheck, nemesis_command, metadata_command, configdoc)."""

from __future__ import annotations

import ast
from pathlib import Path

import trafka

ROOT = Path(trafka.__file__).parent
LAYERS = [  # (prefix, layer): a module may import only from its own layer or lower ones
    ("trafka.settings", 0), ("trafka.wire", 1), ("trafka.storage", 2), ("trafka.broker", 3),
    ("trafka.console", 4), ("trafka.restproxy", 4), ("trafka.testing", 5), ("trafka.cli", 5), ("trafka.healthcheck", 5), ("trafka.nemesis_command", 5), ("trafka.metadata_command", 5),
    ("trafka.configdoc", 5), ("trafka.__main__", 5), ("trafka", 0),
]


def _modules() -> dict[str, Path]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    def resolve(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    edges: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            edges[module] |= {resolve(t) for t in targets if t.startswith("trafka")} - {module, ""}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _layer(module: str) -> int:
    for prefix, layer in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return layer
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")


def test_no_import_circles():
    assert _cycles(_edges(_modules())) == []


def test_the_cycle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_imports_go_one_way_through_the_layers():
    wrong = sorted((m, t) for m, targets in _edges(_modules()).items() for t in targets if _layer(t) > _layer(m))
    assert wrong == []


MAX_MODULE_LINES = 600  # docs/architecture.md: a module that grows past it is split by concern


def test_no_module_is_over_600_lines():
    long = sorted((str(path.relative_to(ROOT.parent)), lines) for path in _modules().values()
                  if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES)
    assert long == []


def test_at_most_six_modules_stand_directly_in_the_broker_package():
    """trafka/broker/ is folders by concern; only what the whole broker is stands beside them."""
    assert len(list((ROOT / "broker").glob("*.py"))) <= 6
