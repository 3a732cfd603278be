"""The Facts pass is made of collaborators with narrow interfaces (issue 21; DESIGN.md, "Facts"): an interpreter of
statements (`Scope`), of expressions (`Expressions`) and of calls (`Calls`), and domain models of tensors, modules
and optimizers that run no code. These tests read the sources, so a change that couples the parts again fails here
rather than silently."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gradguard.facts.scope import EVENT_CONTEXT, Scope

FACTS = Path(__file__).resolve().parent.parent / "server" / "gradguard" / "facts"
DOMAIN_MODELS = {"tensors": "Tensors", "modules": "Modules", "optimizers": "Optimizers"}
INTERPRETER = {"scope", "expressions", "calls", "analysis"}
# What a domain model may read of the analysis itself (beyond the scope's event context): the file's classes.
ANALYSIS_READS = {"modules": {"classes"}}


def _tree(name: str) -> ast.Module:
    return ast.parse((FACTS / f"{name}.py").read_text())


def _facts_imports(name: str) -> set[str]:
    """The facts modules `name` imports, at module level or inside functions."""
    out = set()
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            out.add(node.module.split(".")[0])
    return out


def _class(name: str, cls: str) -> ast.ClassDef:
    return next(n for n in _tree(name).body if isinstance(n, ast.ClassDef) and n.name == cls)


def test_no_class_of_the_analysis_is_built_from_mixins():
    assert Scope.__bases__ == (object,)
    for path in FACTS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                assert not node.name.endswith("Mixin"), (path.name, node.name)
    for name, cls in {**DOMAIN_MODELS, "expressions": "Expressions", "calls": "Calls"}.items():
        assert _class(name, cls).bases == [], cls


def test_the_facts_modules_import_no_circle():
    graph = {p.stem: _facts_imports(p.stem) for p in FACTS.glob("*.py")}

    def visit(node, trail):
        assert node not in trail, " -> ".join(trail + [node])
        for nxt in graph.get(node, ()):
            visit(nxt, trail + [node])

    for name in graph:
        visit(name, [])


@pytest.mark.parametrize("name", sorted(DOMAIN_MODELS))
def test_a_domain_model_imports_no_part_of_the_interpreter(name):
    assert not _facts_imports(name) & INTERPRETER


@pytest.mark.parametrize("name", sorted(DOMAIN_MODELS))
def test_a_domain_model_reads_only_the_event_context_of_its_scope(name):
    """It is handed the running scope as the context of an event; it never evaluates code through it (no `env`, no
    `calls`, no `expressions`), and reaches other models only through its constructor's arguments."""
    reads, analysis_reads = set(), set()
    for node in ast.walk(_class(name, DOMAIN_MODELS[name])):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "scope":
            reads.add(node.attr)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "scope" and node.value.attr == "a":
            analysis_reads.add(node.attr)
    assert reads - {"a"} <= EVENT_CONTEXT, sorted(reads - EVENT_CONTEXT - {"a"})
    assert analysis_reads <= ANALYSIS_READS.get(name, set()), sorted(analysis_reads)
    assert "a" not in reads or analysis_reads


def test_the_event_context_names_what_a_scope_has():
    scope_methods = {n.name for n in _class("scope", "Scope").body if isinstance(n, ast.FunctionDef)}
    init = next(n for n in _class("scope", "Scope").body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    targets = [t for n in ast.walk(init) if isinstance(n, ast.Assign) for t in n.targets]
    targets += [n.target for n in ast.walk(init) if isinstance(n, ast.AnnAssign)]
    attributes = {t.attr for t in targets if isinstance(t, ast.Attribute)}
    assert EVENT_CONTEXT <= scope_methods | attributes, sorted(EVENT_CONTEXT - scope_methods - attributes)
