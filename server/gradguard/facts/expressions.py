"""Expressions: names, literals, attributes, indexing, operators, comprehensions, and joining values.

Python values the code spells out (ints, strings, `None`, bools) are folded, so that `if inplace:`,
`range(n_layers)` or `if h is None:` with known values take the branch the program takes.
"""
from __future__ import annotations

import dataclasses

import libcst as cst

from .model import (
    dimensions,
    is_none,
    truth,
    GRAD_OFF,
    ClassRef,
    Counter,
    DictVal,
    FunctionRef,
    Instance,
    Literal,
    Module,
    Number,
    ParamsOf,
    QualRef,
    Seq,
    Special,
    Storage,
    Tensor,
)
from .names import dotted
from .sets import SharedSet

_MAX_INT = 10 ** 9
# the fields of `torch.return_types` pairs (`x.min(1)`, `x.sort()`, `x.topk(k)`), in their order
RETURN_TYPE_FIELDS = ("values", "indices")


_TENSOR_COMPARISONS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.GreaterThan, cst.LessThanEqual,
                       cst.GreaterThanEqual)


class Expressions:
    """What an expression evaluates to in a scope (names, attributes, indexing, operators, comprehensions, literals,
    what a loop walks). Calls go to the `Calls` it is given; tensor, module and optimizer facts to the domain models
    the scope holds."""

    def __init__(self, calls):
        # node type -> the bound method evaluating it, looked up once per node type (the lookup was the
        # interpreter's top own cost)
        self._evaluators: dict = {cst.Call: calls.eval_Call}

    # ---- dispatch -------------------------------------------------------
    def eval(self, scope, node):
        if node is None:
            return None
        kind = type(node)
        method = self._evaluators.get(kind, _MISSING)
        if method is _MISSING:
            method = self._evaluators[kind] = getattr(self, "eval_" + kind.__name__, None)
        if method is None:
            self.eval_children(scope, node)
            return None
        value = method(scope, node)
        if isinstance(value, Tensor):
            scope.facts.expr_values[id(node)] = value
        return value

    def eval_children(self, scope, node) -> None:
        for child in children(node):
            if isinstance(child, cst.BaseExpression):
                if type(child) is not cst.Lambda:
                    self.eval(scope, child)
            elif isinstance(child, EXPRESSION_HOLDERS):
                self.eval_children(scope, child)

    # ---- names and literals ---------------------------------------------
    def eval_Name(self, scope, node: cst.Name):
        name = node.value
        if name in ("True", "False", "None"):
            return Literal({"True": True, "False": False, "None": None}[name])
        if name == "__name__" and scope.kind == "module":
            return Literal("__main__")  # the user runs the script
        value = scope.lookup(name)
        if value is None and name not in scope.env and not (scope.params and name in scope.params):
            q = scope.a.resolve_dotted(node)
            if q is not None and q not in scope.a.classes:
                return QualRef(q)
            if q is not None:  # a class imported from the user's other file (`from model import Net`)
                value = ClassRef(scope.a.classes[q])
        scope.note_read((scope.serial, name), value, node)
        scope.record_name(node, value)
        return value

    def eval_Integer(self, scope, node):
        try:
            return Literal(int(node.value.replace("_", ""), 0))
        except ValueError:
            return Literal(0)

    def eval_Float(self, scope, node):
        try:
            return Literal(float(node.value.replace("_", "")))
        except ValueError:
            return Literal(0.0)

    def eval_SimpleString(self, scope, node):
        value = _string_value(node)
        return Literal(value if isinstance(value, str) else "")

    def eval_ConcatenatedString(self, scope, node):
        left, right = self.eval(scope, node.left), self.eval(scope, node.right)
        if isinstance(left, Literal) and isinstance(right, Literal) and isinstance(left.value, str) \
                and isinstance(right.value, str):
            return Literal(left.value + right.value)
        return None

    def eval_FormattedString(self, scope, node):
        """`f"weight_ih_l{layer}"` with every replacement field a known int or str: that string; else unknown (one
        made-up value for every such string made keys and attribute names collide)."""
        parts = []
        known = True
        for part in node.parts:
            if type(part) is cst.FormattedStringText:
                parts.append(part.value)
                known = known and "\\" not in part.value and "{" not in part.value and "}" not in part.value
                continue
            value = self.eval(scope, part.expression)
            if part.conversion is None and part.format_spec is None and part.equal is None \
                    and isinstance(value, Literal) \
                    and type(value.value) in (str, int):
                parts.append(str(value.value))
            else:
                known = False
        if known:
            return Literal("".join(parts))
        return None

    def eval_Tuple(self, scope, node: cst.Tuple):
        return self._sequence(scope, node.elements, is_list=False)

    def eval_List(self, scope, node: cst.List):
        return self._sequence(scope, node.elements, is_list=True)

    def _sequence(self, scope, elements, is_list: bool):
        items = []
        spread = []
        known = True
        for e in elements:
            if type(e) is cst.StarredElement:
                value = self.eval(scope, e.value)
                if isinstance(value, Seq) and value.items is not None:
                    items.extend(value.items)
                else:
                    known = False
                    if isinstance(value, ParamsOf):
                        spread.append(value)
            else:
                items.append(self.eval(scope, e.value))
        if not known:
            spread.extend(i for i in items if isinstance(i, (Tensor, ParamsOf)))
        return Seq(items if known else None, path=scope.path, is_list=is_list, spread=spread)

    def eval_Dict(self, scope, node: cst.Dict):
        items = {}
        known = True
        for e in node.elements:
            if type(e) is cst.DictElement:
                key = self.eval(scope, e.key)
                value = self.eval(scope, e.value)
                if isinstance(key, Literal) and isinstance(key.value, str):
                    items[key.value] = value
                else:
                    known = False
            else:
                other = self.eval(scope, e.value)
                if isinstance(other, DictVal) and other.items is not None:
                    items.update(other.items)
                else:
                    known = False
        return DictVal(items if known else None, path=scope.path)

    # ---- attributes -----------------------------------------------------
    def eval_Attribute(self, scope, node: cst.Attribute):
        attr = node.attr.value
        if not self._bound_head(scope, node):
            q = scope.a.resolve_dotted(node)
            if q is not None:
                return scope.a.linked_function(q) or QualRef(q)
        base = self.eval(scope, node.value)
        return self.attribute_of(scope, base, attr, node)

    def attribute_of(self, scope, base, attr: str, node):
        if isinstance(base, (Module, Instance)):
            if attr in base.attrs:
                value = base.attrs[attr]
                scope.note_read((id(base), attr), value, node)
                return value
            if isinstance(base, Module):
                if attr == "training":
                    return None
                value = scope.modules.parameter_attribute(scope, base, attr, node)
                if value is not None:
                    return value
            method = scope.a.method_value(base.cls, attr, base) if base.cls is not None else None
            return method
        if isinstance(base, Tensor):
            if attr == "grad":
                base.grad_read = True
                return scope.tensors.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node, created_by="`.grad`")
            if attr == "data":
                return Tensor(Counter(), base.storage, False, True, origin=node, created_by="`.data`",
                              data_of=base, name=f"{base.name}.data")
            if attr in ("T", "mT", "H", "mH", "real", "imag"):
                return scope.tensors.view_of(scope, base, node, "view")
            if attr == "shape":
                return Seq([Literal(n) for n in base.shape]) if base.shape is not None else \
                    Seq(None, Number(), sizes_of=base)
            if attr == "ndim" and dimensions(base) is not None:
                return Literal(dimensions(base))
            if attr in ("requires_grad", "is_leaf"):
                flag = base.requires_grad if attr == "requires_grad" else base.is_leaf
                return Literal(flag) if flag is not None else None
            if attr in RETURN_TYPE_FIELDS:
                # a tensor has no such attribute: this value stands for the (values, indices) pair of a reduction
                # the op table does not list (`dist.min(1)`), whose values carry its graph and indices none
                if attr == "values":
                    return base
                return scope.tensors.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node,
                                                created_by="`.indices`")
            return None
        if isinstance(base, Seq) and attr in RETURN_TYPE_FIELDS and base.items is not None and len(base.items) == 2 \
                and not base.is_list:
            return base.items[RETURN_TYPE_FIELDS.index(attr)]  # `x.sort(1).values`, `x.topk(k).indices`
        if isinstance(base, Special) and base.kind == "super":
            return base  # `super().__init__` resolved at the call
        if isinstance(base, Special) and base.kind == "namespace":
            return base.payload.get(attr) if base.payload is not None else None  # `args.lr`: its default
        if isinstance(base, ClassRef):
            if attr == "apply" and base.info.is_function:
                return Special("function_apply", base.info)
            return scope.a.method_value(base.info, attr, None)
        if isinstance(base, QualRef):
            return QualRef(f"{base.name}.{attr}")
        if isinstance(base, DictVal) and attr in ("items", "values", "keys", "get"):
            return None
        if base is None and attr == "grad" and type(node.value) is cst.Name and node.value.value in scope.params:
            # `p.grad` of a parameter: used as a tensor it proves `p` is a leaf that requires grad
            scope.grad_proven.add(node.value.value)
        return None

    def _bound_head(self, scope, node) -> bool:
        name = dotted(node)
        if name is None:
            return True
        head = name.split(".")[0]
        if head in scope.env or head in scope.params:
            return True
        if scope.kind != "module" and head in scope.local_names:
            return True
        if head in scope.a.imports:
            return False
        return scope.lookup(head) is not None

    # ---- indexing -------------------------------------------------------
    def eval_Subscript(self, scope, node: cst.Subscript):
        base = self.eval(scope, node.value)
        index_kind = self.eval_slices(scope, node)
        if isinstance(base, Tensor):
            if index_kind == "basic":
                return scope.tensors.view_of(scope, base, node, "index")
            # advanced indexing copies; what it may alias we do not claim
            return scope.tensors.new_tensor(scope, requires_grad=base.requires_grad if scope.grad != GRAD_OFF else False,
                                   is_leaf=None if base.requires_grad is None else not base.requires_grad,
                                   origin=node, created_by="indexing", history=base.history,
                                   owners=scope.tensors.owners_of(scope, [base]))
        if isinstance(base, ParamsOf):
            groups = scope.modules.param_tensors(scope, base.module, node)
            return groups[0] if len(groups) == 1 else None
        if isinstance(base, Module) and base.children is not None:
            index = self._literal_index(scope, node)
            if index is not None and -len(base.children) <= index < len(base.children):
                return base.children[index]
            key = self._literal_key(scope, node)
            if key is not None and base.keys is not None and key in base.keys:
                return base.children[base.keys.index(key)]
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                sl = node.slice[0].slice
                bounds = [self._literal_value(scope, part) for part in (sl.lower, sl.upper, sl.step)]
                if all(b is None or isinstance(b, int) for b in bounds) and base.container:
                    # `self.layers[:-1]`: the same layers (same parameters), a container of its own
                    part = scope.modules.new_module(scope, base.kind, None, None, node)
                    part.container, part.children = base.container, base.children[slice(*bounds)]
                    part.has_params = scope.modules.module_has_params(scope, part)
                    return part
            return None
        if isinstance(base, Seq):
            if base.items is not None:
                index = self._literal_index(scope, node)
                if index is not None and -len(base.items) <= index < len(base.items):
                    return base.items[index]
                if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                    sl = node.slice[0].slice
                    bounds = [self._literal_value(scope, part) for part in (sl.lower, sl.upper, sl.step)]
                    if all(b is None or isinstance(b, int) for b in bounds):
                        return Seq(base.items[slice(*bounds)], path=base.path, is_list=base.is_list)
                return None
            return base.element
        if isinstance(base, DictVal) and base.items is not None:
            key = self.dict_key(scope, node)
            return base.items.get(key) if key is not None else None
        return None

    def _literal_value(self, scope, expr):
        if expr is None:
            return None
        value = self.eval(scope, expr)
        return value.value if isinstance(value, Literal) else object()

    def _literal_index(self, scope, node: cst.Subscript) -> int | None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        value = self.facts_literal(scope, node.slice[0].slice.value)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def _literal_key(self, scope, node: cst.Subscript) -> str | None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        value = self.facts_literal(scope, node.slice[0].slice.value)
        return value if isinstance(value, str) else None

    def dict_key(self, scope, node: cst.Subscript) -> str | int | None:
        """The key of `d[key]` when its value is known: a string or an integer (`cache[start]` in a loop over
        `range(...)`); Python's own dict decides which keys are equal."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        value = self.facts_literal(scope, node.slice[0].slice.value)
        return value if isinstance(value, (str, int)) else None

    def facts_literal(self, scope, expr):
        """The Python value of a literal-valued expression (already evaluated once: re-read without effects)."""
        if type(expr) is cst.Integer:
            return int(expr.value.replace("_", ""), 0) if expr.value.replace("_", "").isdigit() else None
        if type(expr) is cst.SimpleString:
            return _string_value(expr)
        if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
            inner = self.facts_literal(scope, expr.expression)
            return -inner if isinstance(inner, int) else None
        if type(expr) is cst.BinaryOperation and type(expr.operator) in _INT_ARITHMETIC:
            # `laterals[i - 1]` inside `for i in range(...)`: integer arithmetic on known ints
            left, right = self.facts_literal(scope, expr.left), self.facts_literal(scope, expr.right)
            if isinstance(left, int) and isinstance(right, int) and not isinstance(left, bool) \
                    and not isinstance(right, bool) and abs(left) < 1 << 31 and abs(right) < 1 << 31:
                try:
                    return _INT_ARITHMETIC[type(expr.operator)](left, right)
                except ZeroDivisionError:
                    return None
            return None
        if type(expr) is cst.Name:
            value = scope.lookup(expr.value) if expr.value not in ("True", "False", "None") else None
            return value.value if isinstance(value, Literal) else None
        if type(expr) is cst.Attribute and type(expr.value) is cst.Name:
            # `cache.states[self.layer_idx]`: an attribute the constructor set to a known int or string
            owner = scope.lookup(expr.value.value)
            value = owner.attrs.get(expr.attr.value) if isinstance(owner, (Module, Instance)) else None
            return value.value if isinstance(value, Literal) and isinstance(value.value, (int, str)) else None
        return None

    def eval_slices(self, scope, node: cst.Subscript) -> str:
        """Evaluate the index expressions; 'basic' when every index is an int, slice, None or Ellipsis."""
        kind = "basic"
        for element in node.slice:
            sl = element.slice
            if type(sl) is cst.Slice:
                for part in (sl.lower, sl.upper, sl.step):
                    if part is not None:
                        self.eval(scope, part)
                continue
            value = self.eval(scope, sl.value)
            expr = sl.value
            if type(expr) in (cst.Integer, cst.Ellipsis) or (type(expr) is cst.Name and expr.value == "None"):
                continue
            if isinstance(value, Literal) and (isinstance(value.value, int) or value.value is None):
                continue
            if isinstance(value, Number) and value.is_int:
                continue
            if type(expr) in (cst.BinaryOperation, cst.UnaryOperation) and _int_arith(expr, scope):
                continue
            kind = "advanced" if isinstance(value, Tensor) else "unknown"
        return kind

    # ---- operators ------------------------------------------------------
    def eval_BinaryOperation(self, scope, node: cst.BinaryOperation):
        left = self.eval(scope, node.left)
        right = self.eval(scope, node.right)
        op = type(node.operator).__name__
        if isinstance(left, Literal) and isinstance(right, Literal):
            return self.literal_binop(scope, left, right, op)
        if isinstance(left, (Literal, Number)) and isinstance(right, (Literal, Number)):
            ints = all(isinstance(v, Number) and v.is_int or isinstance(v, Literal) and isinstance(v.value, int)
                       for v in (left, right))
            return Number(ints and op not in ("Divide", "Power"))
        if isinstance(left, Seq) and isinstance(right, Seq) and op == "Add":
            if left.items is not None and right.items is not None:
                return Seq(left.items + right.items, path=scope.path, is_list=left.is_list)
            return None
        name = _BINOPS.get(op)
        if name is None:
            return scope.tensors._generic_result(scope, [left, right], node)
        if not (isinstance(left, Tensor) or isinstance(right, Tensor)):
            return None
        row = scope.ops.by_name.get(name)
        args = [left, right]
        if row is not None and name == "Tensor.__pow__" and isinstance(right, Tensor):
            row = POW_BOTH
        return scope.tensors.apply_op(scope, row, args, node, op_name=_OP_SYMBOL.get(name, name))

    def literal_binop(self, scope, left: Literal, right: Literal, op: str):
        a, b = left.value, right.value
        numeric = (int, float)
        try:
            if isinstance(a, bool) or isinstance(b, bool):
                a, b = (int(a) if isinstance(a, bool) else a), (int(b) if isinstance(b, bool) else b)
            if isinstance(a, numeric) and isinstance(b, numeric):
                if op == "Add":
                    result = a + b
                elif op == "Subtract":
                    result = a - b
                elif op == "Multiply":
                    result = a * b
                elif op == "Divide":
                    result = a / b
                elif op == "FloorDivide":
                    result = a // b
                elif op == "Modulo":
                    result = a % b
                elif op == "Power" and abs(b) <= 64 and abs(a) <= 1024:
                    result = a ** b
                else:
                    return None
                if isinstance(result, int) and abs(result) > _MAX_INT:
                    return None
                return Literal(result)
            if isinstance(a, str) and isinstance(b, str) and op == "Add" and len(a) + len(b) < 256:
                return Literal(a + b)
        except (ArithmeticError, TypeError, ValueError):
            return None
        return None

    def eval_UnaryOperation(self, scope, node: cst.UnaryOperation):
        value = self.eval(scope, node.expression)
        op = type(node.operator).__name__
        if op == "Not":
            flag = truth(value)
            return Literal(not flag) if flag is not None else None
        if isinstance(value, Tensor):
            return scope.tensors._generic_result(scope, [value], node)
        if isinstance(value, Literal) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
            if op == "Minus":
                return Literal(-value.value)
            if op == "Plus":
                return value
        return None

    def eval_Comparison(self, scope, node: cst.Comparison):
        left = first = self.eval(scope, node.left)
        result: bool | None = True
        for target in node.comparisons:
            right = self.eval(scope, target.comparator)
            outcome = _compare(left, type(target.operator).__name__, right)
            if outcome is None:
                result = None
            elif outcome is False and result is not None:
                result = False
            left = right
        if result is None and len(node.comparisons) == 1 and type(node.comparisons[0].operator) in _TENSOR_COMPARISONS \
                and (isinstance(first, Tensor) or isinstance(left, Tensor)):
            # `ids == token_id`, `x > 0`: a new boolean tensor outside any graph (a mask for `w[mask] = v`)
            return scope.tensors.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node,
                                            created_by="a comparison")
        if any(isinstance(v, Tensor) for v in (left,)) and result is None:
            return None
        return Literal(result) if result is not None else None

    def eval_BooleanOperation(self, scope, node: cst.BooleanOperation):
        left = self.eval(scope, node.left)
        flag = truth(left)
        is_and = type(node.operator) is cst.And
        if flag is not None and (flag is False if is_and else flag is True):
            return left  # short-circuit: the right side does not run
        right = self.eval(scope, node.right)
        if flag is not None:
            return right
        right_flag = truth(right)
        if is_and and right_flag is False:
            return Literal(False) if isinstance(right, Literal) else None
        if not is_and and right_flag is True and isinstance(right, Literal):
            return Literal(True)
        return None

    def eval_IfExp(self, scope, node: cst.IfExp):
        test = self.eval(scope, node.test)
        flag = truth(test)
        if flag is True:
            return self.eval(scope, node.body)
        if flag is False:
            return self.eval(scope, node.orelse)
        saved = scope.path
        scope.path = scope.branch_path(node, 0)
        a = self.eval(scope, node.body)
        scope.path = scope.branch_path(node, 1)
        b = self.eval(scope, node.orelse)
        scope.path = saved
        if a is b:
            return a
        joined = self.join_values(scope, [a, b])
        if isinstance(joined, Tensor):
            joined.alternatives, joined.alternatives_top = (a, b), scope.top
        return joined

    def eval_Lambda(self, scope, node: cst.Lambda):
        return FunctionRef(node, top=scope.top, enclosing=scope)

    def eval_Yield(self, scope, node: cst.Yield):
        if type(node.value) is cst.From:
            source = self.eval(scope, node.value.item)
            items = self.iteration_items(scope, source)
            scope.yields.extend(items if items is not None else [self.element_of(scope, source, node.value.item)])
        else:
            scope.yields.append(self.eval(scope, node.value) if node.value is not None else Literal(None))
        return None  # what `.send()` passes in: not followed

    def eval_Await(self, scope, node):
        return self.eval(scope, node.expression)

    def eval_NamedExpr(self, scope, node: cst.NamedExpr):
        value = self.eval(scope, node.value)
        scope.assign(node.target, value, node.value, scope.stmt)
        return value

    # ---- comprehensions -------------------------------------------------
    def eval_ListComp(self, scope, node):
        return self._comprehension(scope, node.for_in, lambda: self.eval(scope, node.elt), is_list=True)

    def eval_GeneratorExp(self, scope, node):
        return self._comprehension(scope, node.for_in, lambda: self.eval(scope, node.elt), is_list=False)

    def eval_SetComp(self, scope, node):
        self._comprehension(scope, node.for_in, lambda: self.eval(scope, node.elt), is_list=False)
        return None

    def eval_DictComp(self, scope, node):
        self._comprehension(scope, node.for_in, lambda: (self.eval(scope, node.key), self.eval(scope, node.value)), is_list=False)
        return None

    def _comprehension(self, scope, for_in: cst.CompFor, element, is_list: bool):
        """Each element evaluated in its own binding of the loop names; a Seq of the results.

        A known, short iterable gives one element per item (`[nn.Linear(d, d) for _ in range(3)]` is three
        layers); otherwise the element is evaluated once and stands for every item.
        """
        saved = {}
        bound_names = []

        def bind(target, value):
            for name in _target_names(target):
                if name not in saved:
                    saved[name] = scope.env.get(name, _MISSING)
                    bound_names.append(name)
            scope.assign(target, value, for_in.iter, scope.stmt)

        results: list = []
        known = self._comprehend(scope, for_in, element, bind, results)
        for name in bound_names:
            if saved[name] is _MISSING:
                scope.env.pop(name, None)
            else:
                scope.env[name] = saved[name]
        if known:
            return Seq(results, path=scope.path, is_list=is_list)
        return Seq(None, results[0] if len(results) == 1 else self.join_values(scope, results), path=scope.path,
                   is_list=is_list)

    def _comprehend(self, scope, for_in: cst.CompFor, element, bind, results: list) -> bool:
        iterable = self.iterated(scope, self.eval(scope, for_in.iter), for_in.iter)
        items = self.iteration_items(scope, iterable)
        known = items is not None
        for item in (items if known else [self.element_of(scope, iterable, for_in.iter)]):
            bind(for_in.target, item)
            keep = True
            for cond in for_in.ifs:
                flag = truth(self.eval(scope, cond.test))
                if flag is False:
                    keep = False
                elif flag is None:
                    known = False
            if not keep:
                continue
            if for_in.inner_for_in is not None:
                known = self._comprehend(scope, for_in.inner_for_in, element, bind, results) and known
            else:
                results.append(element())
        return known

    # ---- iteration ------------------------------------------------------
    def iterated(self, scope, value, node):
        """What a `for` loop (or list(), zip(), a comprehension) walks over: for an instance of a class of this
        file with `__iter__` (a hand-written data loader), what that method returns or yields."""
        if isinstance(value, Instance) and value.cls is not None:
            method = scope.a.method_value(value.cls, "__iter__", value)
            if method is not None:
                return scope.calls.call_function(scope, method, [], {}, node, value)
        return value

    def iteration_items(self, scope, iterable) -> list | None:
        """The items a for-loop visits when the code makes them plain and they are few."""
        limit = scope.a.max_unroll
        if isinstance(iterable, Seq) and iterable.items is not None and (
                len(iterable.items) <= limit or iterable.module_walk and len(iterable.items) <= scope.a.max_module_walk):
            # `for m in self.modules(): if isinstance(m, nn.Dropout): m.inplace = True` must reach every module
            return list(iterable.items)
        if isinstance(iterable, _Range) and iterable.values is not None:
            return [Literal(v) for v in iterable.values[:limit]] if len(iterable.values) <= limit else None
        if isinstance(iterable, Module) and iterable.children is not None:
            # twelve identical blocks behave like the first few: what one block's forward can do to the next shows
            # within them, and interpreting every block of every model multiplied the cost of library code
            return list(iterable.children[:scope.a.max_layer_unroll])
        if isinstance(iterable, ParamsOf):
            # each parameter on its own when torch's names are known (`if p.dim() > 1:` then picks the weights),
            # else one stand-in per layer
            pairs = scope.modules.named_parameters(scope, iterable.module, None)
            tensors = [p.items[1] for p in pairs] if pairs is not None and len(pairs) <= limit else \
                scope.modules.param_tensors(scope, iterable.module, None)
            return tensors if len(tensors) <= limit else None
        if isinstance(iterable, DictVal) and iterable.items is not None and len(iterable.items) <= limit:
            return [Literal(k) for k in iterable.items]
        return None

    def element_of(self, scope, iterable, iter_node):
        if isinstance(iterable, ParamsOf):
            tensors = scope.modules.param_tensors(scope, iterable.module, iter_node)
            return tensors[0] if len(tensors) == 1 else None
        if isinstance(iterable, Seq):
            if iterable.items:
                first = iterable.items[0]
                if all(item is first for item in iterable.items):
                    return first
                return self.join_values(scope, iterable.items)
            return iterable.element
        if isinstance(iterable, Tensor):
            # iterating a tensor unbinds it: the rows are multi-output views
            return scope.tensors.view_of(scope, iterable, iter_node, "multi")
        if isinstance(iterable, _Range):
            return Literal(0) if iterable.values is None else None
        if isinstance(iterable, Module) and iterable.children:
            return self.join_values(scope, iterable.children)
        return None

    # ---- joining --------------------------------------------------------
    def join_values(self, scope, values: list):
        """One value standing for several (branch arms, list items): only what holds for all of them."""
        values = [v for v in values]
        if not values:
            return None
        first = values[0]
        if all(v is first for v in values):
            return first
        if all(isinstance(v, Literal) for v in values) and all(v.value == first.value for v in values):
            return first
        if all(isinstance(v, Tensor) for v in values):
            rg = first.requires_grad if all(v.requires_grad == first.requires_grad for v in values) else None
            leaf = first.is_leaf if all(v.is_leaf == first.is_leaf for v in values) else None
            # a fresh counter: writes after the join reach none of the alternatives' saves (a miss, never a
            # false alarm); the histories are kept, each save tagged with the branch it came from
            t = Tensor(Counter(known_start=False), Storage(), rg, leaf, origin=first.origin,
                       created_by="one of several values", history=SharedSet.union(v.history for v in values),
                       owners=SharedSet.union(v.owners for v in values))
            names = {v.name for v in values}
            t.name = first.name if len(names) == 1 else ""
            return t
        if all(isinstance(v, Seq) for v in values):
            lengths = {len(v.items) if v.items is not None else None for v in values}
            if len(lengths) == 1 and None not in lengths:
                n = lengths.pop()
                return Seq([self.join_values(scope, [v.items[i] for v in values]) for i in range(n)], path=scope.path,
                           is_list=first.is_list)
            return None
        return None


class _Range:
    """`range(...)`: its values when the bounds are literal."""

    def __init__(self, values):
        self.values = values


_MISSING = object()


def _target_names(target) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        out = []
        for e in target.elements:
            out.extend(_target_names(e.value))
        return out
    if type(target) is cst.StarredElement:
        return _target_names(target.value)
    return []


def _compare(left, op: str, right) -> bool | None:
    if op in ("Is", "IsNot"):
        outcome = None
        if isinstance(right, Literal) and right.value is None:
            outcome = is_none(left)
        elif isinstance(left, Literal) and left.value is None:
            outcome = is_none(right)
        elif left is not None and left is right and not isinstance(left, Literal):
            outcome = True
        if outcome is None:
            return None
        return outcome if op == "Is" else not outcome
    if isinstance(left, Literal) and isinstance(right, Literal):
        a, b = left.value, right.value
        try:
            if op == "Equal":
                return a == b
            if op == "NotEqual":
                return a != b
            if op == "LessThan":
                return a < b
            if op == "GreaterThan":
                return a > b
            if op == "LessThanEqual":
                return a <= b
            if op == "GreaterThanEqual":
                return a >= b
        except TypeError:
            return None
    if op in ("In", "NotIn") and isinstance(left, Literal) and isinstance(right, Literal) \
            and type(left.value) is str and type(right.value) is str:
        return (left.value in right.value) if op == "In" else (left.value not in right.value)
    if op in ("In", "NotIn") and isinstance(left, Literal):
        if isinstance(right, Seq) and right.items is not None and all(isinstance(i, Literal) for i in right.items):
            found = any(i.value == left.value for i in right.items)
            return found if op == "In" else not found
        if isinstance(right, DictVal) and right.items is not None and isinstance(left.value, (str, int)):
            found = left.value in right.items
            return found if op == "In" else not found
    return None


def _int_arith(expr, scope) -> bool:
    def walk(e):
        if type(e) is cst.Integer:
            return True
        if type(e) is cst.Name:
            v = scope.lookup(e.value)
            return (isinstance(v, Literal) and isinstance(v.value, int)) or (isinstance(v, Number) and v.is_int)
        if type(e) is cst.BinaryOperation:
            return walk(e.left) and walk(e.right)
        if type(e) is cst.UnaryOperation:
            return walk(e.expression)
        return False

    return walk(expr)


EXPRESSION_HOLDERS = (cst.Arg, cst.Element, cst.DictElement, cst.StarredDictElement, cst.FormattedStringExpression,
                      cst.CompFor, cst.CompIf, cst.SubscriptElement, cst.Index, cst.Slice)

_FIELDS: dict[type, tuple[str, ...]] = {}


def _string_value(node: cst.SimpleString):
    """A string literal's value; plain quotes without escapes are read directly (libcst's `evaluated_value`
    runs `ast.literal_eval`, which cost more than the rest of evaluating a model file)."""
    text = node.value
    if text[:1] in "'\"" and "\\" not in text:
        quote = text[:3] if text[:3] in ('"""', "'''") else text[:1]
        if text.endswith(quote) and len(text) >= 2 * len(quote):
            return text[len(quote):-len(quote)]
    try:
        value = node.evaluated_value
    except Exception:  # noqa: BLE001
        return None
    return value if isinstance(value, str) else None


def children(node):
    """A node's child nodes, read off its fields (libcst's `.children` rebuilds the node, which is slow)."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(
            f.name for f in dataclasses.fields(node)
            if f.name not in ("lpar", "rpar", "whitespace_before", "whitespace_after", "comma", "semicolon")
            and not f.name.startswith("whitespace"))
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            for item in value:
                if is_node_type(type(item)):
                    yield item
        elif is_node_type(kind):
            yield value


_NODE_TYPES: dict[type, bool] = {}


def is_node_type(kind: type) -> bool:
    """`issubclass(kind, cst.CSTNode)`, remembered: libcst's classes are ABCs, and a failing `isinstance` against
    one goes through `ABCMeta.__instancecheck__` (millions of calls per run were 8% of the Facts pass)."""
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return known


_WORD_HOLDERS: dict[type, bool] = {}


def _holds_words(kind: type) -> bool:
    known = _WORD_HOLDERS.get(kind)
    if known is None:
        known = _WORD_HOLDERS[kind] = issubclass(kind, (cst.BaseExpression, *EXPRESSION_HOLDERS))
    return known


def words(expr) -> list[str]:
    out = []
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name or kind is cst.SimpleString:
            out.append(node.value)
        elif _holds_words(kind):
            stack.extend(c for c in children(node) if _holds_words(type(c)))
    return out


_BINOPS = {
    "Add": "Tensor.__add__", "Subtract": "Tensor.__sub__", "Multiply": "Tensor.__mul__",
    "Divide": "Tensor.__truediv__", "Power": "Tensor.__pow__", "MatrixMultiply": "Tensor.__matmul__",
}
_OP_SYMBOL = {"Tensor.__add__": "+", "Tensor.__sub__": "-", "Tensor.__mul__": "*", "Tensor.__truediv__": "/",
              "Tensor.__pow__": "**", "Tensor.__matmul__": "@"}


def _pow_both():
    from ..ops import OpRow

    return OpRow("pow", "function", "all", True, "none", None, ())


POW_BOTH = _pow_both()
Range = _Range

# Integer arithmetic that an index may be written with (`laterals[i - 1]`); pure, so re-read without effects.
_INT_ARITHMETIC = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.FloorDivide: lambda a, b: a // b, cst.Modulo: lambda a, b: a % b,
}
