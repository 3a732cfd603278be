"""Import resolution: which local names stand for which torch modules and callables."""
from __future__ import annotations

import libcst as cst


def dotted(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` as a string, or None when the expression is not a plain dotted name."""
    kind = type(expr)  # identity, not isinstance: libcst's node classes are ABCs (slow when the check fails)
    if kind is cst.Name:
        return expr.value
    if kind is cst.Attribute:
        left = dotted(expr.value)
        return None if left is None else f"{left}.{expr.attr.value}"
    return None


def collect_imports(statements, imports: dict[str, str]) -> None:
    """Add `import`/`from ... import` bindings found in `statements` (not nested scopes)."""
    for stmt in statements:
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                _add_import(small, imports)
        elif type(stmt) in (cst.If, cst.Try):
            # `try: import x except ImportError: ...` and `if TYPE_CHECKING:` blocks
            collect_imports(stmt.body.body, imports)
            for handler in getattr(stmt, "handlers", ()):
                collect_imports(handler.body.body, imports)
            orelse = getattr(stmt, "orelse", None)
            if orelse is not None and hasattr(orelse, "body") and hasattr(orelse.body, "body"):
                collect_imports(orelse.body.body, imports)


def _add_import(small: cst.BaseSmallStatement, imports: dict[str, str]) -> None:
    if type(small) is cst.Import:
        for alias in small.names:
            full = dotted(alias.name)
            if full is None:
                continue
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                imports[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                imports[head] = head
    elif type(small) is cst.ImportFrom:
        # `from .models.gen import Gen` is kept as `.models.gen.Gen` (Engine.import_candidates resolves the dots)
        dots = "." * len(small.relative)
        module = dotted(small.module) if small.module is not None else ""
        if module is None or (not module and not dots) or type(small.names) is cst.ImportStar:
            return
        module = dots + module
        for alias in small.names:
            name = dotted(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                local = alias.asname.name.value
            imports[local] = f"{module}{'' if module.endswith('.') else '.'}{name}"


# Some torch names live under several paths; map them to the one the op table uses.
_CANONICAL_PREFIXES = (
    ("torch.nn.modules.", None),
    ("torch.nn.parameter.Parameter", "torch.nn.Parameter"),
    ("torch.functional.", "torch."),
    ("torch.optim.optimizer.Optimizer", "torch.optim.Optimizer"),
)


def canonical(qualified: str) -> str:
    for prefix, replacement in _CANONICAL_PREFIXES:
        if qualified.startswith(prefix):
            if replacement is None:
                # torch.nn.modules.linear.Linear -> torch.nn.Linear
                return "torch.nn." + qualified.rsplit(".", 1)[-1]
            return replacement + qualified[len(prefix):]
    return qualified
