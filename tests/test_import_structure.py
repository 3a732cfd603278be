"""Imports go one way (STYLE.md, "One direction"; issue 32): entry points sit on top, shared records and helpers
live in the lower module they belong to, and no module reaches back up. An import inside a function to dodge a
circle is a circle, so these tests read every import statement of the sources, wherever it sits."""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "server" / "gradguard"
CLIENT_SRC = REPO / "client-vscode" / "src"


def _python_modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _python_imports(name: str, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports, at module level or in a function: `from .x import y` counts
    `x`, and `y` too when it is a module of its own."""
    path = modules[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            parts = package.split(".")[:len(package.split(".")) - (node.level - 1)]
            target = ".".join(parts + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        for alias in node.names:
            out.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
    return {m for m in out if m in modules and m != name}


def _typescript_imports(path: Path) -> set[str]:
    """The src/ files a .ts file imports (`import ... from './x'`, `export ... from`, `import('./x')`, `require`)."""
    text = path.read_text(encoding="utf-8")
    found = re.findall(r"""(?:from\s+|import\s*\(\s*|require\s*\(\s*|^import\s+)['"](\.{1,2}/[^'"]+)['"]""", text, re.M)
    out = set()
    for spec in found:
        target = (path.parent / spec).resolve()
        for candidate in (target.with_suffix(".ts"), target / "index.ts"):
            if candidate.is_file():
                out.add(candidate.relative_to(CLIENT_SRC).as_posix())
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
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


def _described(graph: dict[str, set[str]], component: list[str]) -> str:
    return "; ".join(f"{m} -> {', '.join(sorted(graph[m] & set(component)))}" for m in component)


def test_the_circle_finder_finds_a_circle_through_three_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_the_python_package_has_no_import_circle():
    modules = _python_modules()
    graph = {name: _python_imports(name, modules) for name in modules}
    assert graph["gradguard.lsp.server"] >= {"gradguard.lsp.documents", "gradguard.notebook"}  # the reader reads
    found = circles(graph)
    assert found == [], "\n".join(_described(graph, c) for c in found)


def test_the_command_line_module_is_imported_by_nothing_but_main():
    modules = _python_modules()
    importers = sorted(name for name in modules if "gradguard.cli" in _python_imports(name, modules))
    assert importers == ["gradguard.__main__"]


def test_the_vscode_extension_has_no_import_circle():
    graph = {p.relative_to(CLIENT_SRC).as_posix(): _typescript_imports(p) for p in CLIENT_SRC.rglob("*.ts")}
    assert "server.ts" in graph["extension.ts"]  # the reader reads
    found = circles(graph)
    assert found == [], "\n".join(_described(graph, c) for c in found)
