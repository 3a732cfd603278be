"""The one analysis pass over a file: module code with every call it makes, and each function on its own.

Two kinds of run produce the file's Facts:
- the module run interprets the module's statements in order (`__name__ == "__main__"`); each call to a
  function, method or class of this file is interpreted with the caller's values (calls.py), so a bug inside
  `def train(G, D, loader)` called from the script is found with the real models and optimizers;
- every function and method is also run on its own, with unknown arguments (a library function, a method
  nobody in this file calls): only what holds for any caller is claimed there. These runs are cached per
  block, with the other blocks they read, so an edit inside one function re-runs that function.

Everything the analysis is not sure of is unknown, and unknowns never produce problems.
"""
from __future__ import annotations

import functools
import re
import weakref

import libcst as cst

from ..ops import load_op_table
from .classes import ClassInfo, collect_class, find_method, summarise_layers, walk_statements
from .expressions import children
from .facts import Facts, TensorFacts  # noqa: F401  (re-exported)
from .model import GRAD_OFF, GRAD_ON, GRAD_UNKNOWN, ClassRef, FunctionRef
from .names import canonical, collect_imports, dotted
from .summaries import SummaryStore, _Copier, _NotSummarisable

GRAD_METHODS = {"forward", "training_step", "__call__"}
_LIBRARY_ROOTS = {"torch", "numpy", "np", "os", "sys", "math", "random", "typing", "collections", "functools",
                  "itertools", "dataclasses", "pathlib", "json", "re", "time", "logging", "argparse", "abc",
                  "copy", "warnings", "contextlib", "enum", "inspect", "torchvision", "transformers", "timm"}


class FileAnalysis:
    """Runs the interpreter over one file's parsed blocks."""

    # interpreted statements per run; past it the run notes where (the report is never a clean pass), and the rest
    # of it runs on a second allowance as large, its loops once
    max_steps = 60_000
    max_calls = 1_000  # interpreted calls per run
    max_unroll = 16  # a loop over a known sequence runs once per item up to this length
    max_module_walk = 256  # `for m in self.modules()` visits every module up to this many
    max_layer_unroll = 4  # a loop over a layer list (`for blk in self.blocks`) runs over its first layers only

    def __init__(self, modules: list[cst.Module], quiet_modules: set[int] | frozenset = frozenset(),
                 block_cache: dict | None = None, external_classes=None, hot_text: str = "",
                 called_names: set | None = None, describe_quiet: bool = False, texts: dict | None = None,
                 block_index: dict | None = None, module_runs: dict | None = None, document: str = "",
                 linked=None, cancelled=None):
        self.block_cache = block_cache
        self.block_index = block_index
        # document -> its last module-level run and what that run could read (an editor's; see _module_run)
        self.module_runs = module_runs
        self.document = document
        self.cancelled = cancelled  # () -> bool, polled between statements (scope.step): a newer edit stops this run
        self.module_code_ran = False  # whether run() interpreted the module-level code (a cached run is reused)
        self.members_ran: list[str] = []  # the class members this run interpreted anew (tests count the reuses)
        self._bound: dict | None = None  # name -> how the module binds it (`_names_bound`)
        self.called_names = called_names  # names this file's code calls (`train(`, `.step(`): None = not known
        # An editor also runs functions that write nothing, for what hover says about their names; their runs
        # report no problem, so the editor and `gradguard check` (which skips them) always agree.
        self.describe_quiet = describe_quiet
        self.silent = False
        self._writes: dict[int, tuple] = {}
        self.texts = texts or {}  # id(block module) -> the block's text
        self._def_heads: dict[int, dict] = {}  # id(block module) -> def name -> its `def` line matches
        self._chunks: dict[int, str] = {}  # id(FunctionDef) -> its text
        self._text_hot: dict[int, bool | None] = {}  # id(FunctionDef) -> what _text_writes said
        self._called_by: dict[int, set] = {}  # id(FunctionDef) -> the names its text calls
        self._init_shapes: dict[int, bool] = {}  # id(__init__ FunctionDef) -> whether it shapes layers
        self._instances: dict[int, tuple] = {}  # id(ClassInfo) -> (abstract instance, snapshot, built reporting)
        # id(ClassInfo) -> (an unrecorded build, its steps, calls and reads) that methods' instances copy, per check
        self._templates: dict[int, tuple | None] = {}
        self._instance_needs: dict[int, int] = {}  # id(ClassInfo) -> methods of this check still to build one
        self.summaries = SummaryStore()  # constructors run once per call context (per block run, as _instances)
        # quiet_modules: ids of block modules whose text has no in-place write, step() or backward(): they
        # are not run on their own (they cannot produce a problem), but calls from other code still reach them.
        self.quiet_modules = quiet_modules
        self.modules = modules
        self.scopes = weakref.WeakSet()  # every Scope of the run that is still alive (see `release`)
        self.facts = Facts()
        self.ops = load_op_table()
        self.imports: dict[str, str] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        self.top_of: dict[int, cst.CSTNode] = {}  # id(def/lambda node) -> top-level statement holding it
        self.module_of: dict[int, cst.Module] = {}  # id(top-level statement) -> its block module
        self.steps = 0
        self.calls = 0
        self.budget_noted: set[str] = set()  # the budgets whose first cut in this run is noted (one note each)
        self.deps: set | None = None  # block modules read by the current cached run
        # a member run of a class (see _run_class_members): that class, its members by the definitions they
        # hold, and the members the run read
        self._member_class: cst.ClassDef | None = None
        self._member_of: dict[int, cst.CSTNode] = {}
        self.member_deps: set = set()
        self._locals: dict[int, set[str]] = {}
        self._generators: dict[int, bool] = {}  # id(FunctionDef) -> has a `yield` of its own
        self._globals: dict[int, set[str]] = {}
        statements = [stmt for m in modules for stmt in m.body]
        for m in modules:
            for stmt in m.body:
                self.module_of[id(stmt)] = m
        self.statements = statements
        collect_imports(statements, self.imports)
        # Definitions linked from the project's other files (project.py) are bound in this program: the imports
        # they replace are not library names any more.
        self.linked_aliases: dict = {}
        self.linked_qualnames: dict = {}
        self.linked_names: frozenset = frozenset()
        if linked is not None:
            self.linked_names = linked.names
            for name in linked.names:
                self.imports.pop(name, None)
            self.linked_aliases = linked.aliases
            self.linked_qualnames = linked.qualnames
        self.linked_targets = frozenset(self.linked_qualnames.values())
        self.bindings: dict[str, list] = {}  # module-level name -> [(value expression, top statement)]
        for m in modules:
            # which top-level statement holds each nested def/class: per block, kept across edits when given
            key = ("tops", id(m))
            entry = block_index.get(key) if block_index is not None else None
            if entry is None or entry[0] is not m:
                tops: dict[int, cst.CSTNode] = {}
                for stmt in m.body:
                    self._index_tops(stmt, tops)
                entry = (m, tops)
                if block_index is not None:
                    block_index[key] = entry
            self.top_of.update(entry[1])
        for stmt in statements:
            if type(stmt) is cst.ClassDef:
                self.classes[stmt.name.value] = collect_class(self, stmt)
            elif type(stmt) is cst.FunctionDef:
                self.functions[stmt.name.value] = stmt
            self._index_bindings(stmt, stmt)
        for info in self.classes.values():
            summarise_layers(self, info)
        if external_classes is not None and hot_text:
            # Classes imported from the user's other modules (`from model import Net`), summarised from their
            # files; only names that the interpreted blocks call are looked up (it costs file-system probes).
            hot_calls = None
            for local, full in self.imports.items():
                if full.split(".")[0] in _LIBRARY_ROOTS or local in self.classes or not local[:1].isupper():
                    continue
                if hot_calls is None:
                    hot_calls = set(_CALLED.findall(hot_text))  # one pass, not one regex per imported name
                if local not in hot_calls:
                    continue
                info = external_classes(full)
                if info is not None:
                    info.external = True
                    self.classes[full] = info

    @staticmethod
    def _index_tops(top: cst.CSTNode, top_of: dict) -> None:
        # walk_statements already descends into compound statements (not into defs), so each def/class body is
        # walked once: re-walking every nested `if` from each enclosing one was exponential in the nesting depth.
        stack = [top]
        while stack:
            node = stack.pop()
            for inner in walk_statements([node]):
                if type(inner) in (cst.FunctionDef, cst.ClassDef):
                    top_of[id(inner)] = top
                    if inner is not node:
                        stack.append(inner)
                    elif type(inner.body) is cst.IndentedBlock:
                        stack.extend(inner.body.body)

    def _index_bindings(self, stmt, top) -> None:
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                if type(small) is cst.Assign:
                    for target in small.targets:
                        if type(target.target) is cst.Name:
                            self.bindings.setdefault(target.target.value, []).append((small.value, top))
                elif type(small) in (cst.AugAssign, cst.AnnAssign) and type(small.target) is cst.Name:
                    self.bindings.setdefault(small.target.value, []).append((None, top))
        elif type(stmt) in (cst.If, cst.Try, cst.With, cst.For, cst.While):
            for inner in walk_statements([stmt]):
                if inner is stmt:
                    continue
                if type(inner) is cst.SimpleStatementLine:
                    for small in inner.body:
                        targets = [t.target for t in small.targets] if type(small) is cst.Assign else (
                            [small.target] if type(small) in (cst.AugAssign, cst.AnnAssign) else [])
                        for target in targets:
                            if type(target) is cst.Name:
                                value = small.value if type(small) is cst.Assign and type(stmt) is cst.If \
                                    and _is_main_guard(stmt.test) else None
                                self.bindings.setdefault(target.value, []).append((value, top))
                elif isinstance(inner, (cst.For,)):
                    for name in _target_names(inner.target):
                        self.bindings.setdefault(name, []).append((None, top))

    # ---- names ----------------------------------------------------------
    def resolve_dotted(self, expr: cst.BaseExpression) -> str | None:
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.imports:
            full = self.imports[head] + ("." + rest if rest else "")
            linked = self.linked_qualnames.get(full) if self.linked_qualnames else None
            if linked is not None:
                return linked  # `losses.nt_xent` through `import losses`: the linked definition's own name
            return canonical(full)
        if head in self.classes and not rest:
            return head
        return None

    def callee_qualname(self, call: cst.Call) -> str | None:
        return self.resolve_dotted(call.func)

    def touch(self, node) -> None:
        """The current cached run reads this definition: an edit to its block must re-run the reader. Inside the
        class whose member is running, the member holding the definition (the class's header is always read)."""
        if self.deps is None or node is None:
            return
        top = self.top_of.get(id(node), node)
        if top is self._member_class:
            item = self._member_of.get(id(node))
            if item is not None:
                self.member_deps.add(item)
            return
        module = self.module_of.get(id(top))
        if module is not None:
            self.deps.add(module)

    def definition_value(self, name: str):
        """A module-level def or class as a value."""
        name = self.linked_aliases.get(name, name)
        fn = self.functions.get(name)
        if fn is not None:
            self.touch(fn)
            return self.function_value(fn, enclosing=None, top=self.top_of.get(id(fn), fn))
        info = self.classes.get(name)
        if info is not None and not info.external:
            self.touch(info.node)
            return ClassRef(info)
        if info is not None:
            return ClassRef(info)
        return None

    def linked_function(self, q: str):
        """The function a dotted name through a project module alias stands for (`losses.nt_xent`), or None."""
        if q not in self.linked_targets or q not in self.functions:
            return None
        return self.definition_value(q)

    def is_generator(self, fn: cst.FunctionDef) -> bool:
        """`fn`'s own body holds a `yield` (nested defs, lambdas and classes aside)."""
        known = self._generators.get(id(fn))
        if known is None:
            known = False
            top = self.top_of.get(id(fn))
            module = self.module_of.get(id(top)) if top is not None else None
            text = self.texts.get(id(module)) if module is not None else None
            # the block's text says at once that most functions are not generators (walking each tree was 10% of
            # the pass on timm)
            stack = list(children(fn.body)) if text is None or "yield" in text else []
            while stack and not known:
                node = stack.pop()
                if type(node) is cst.Yield:
                    known = True
                elif type(node) not in (cst.FunctionDef, cst.Lambda, cst.ClassDef):
                    stack.extend(children(node))
            self._generators[id(fn)] = known
        return known

    def function_value(self, fn: cst.FunctionDef, enclosing=None, top=None, cls=None, bound=None) -> FunctionRef:
        kind = "function"
        for deco in fn.decorators:
            name = dotted(deco.decorator) or ""
            if name == "staticmethod":
                kind = "staticmethod"
            elif name == "classmethod":
                kind = "classmethod"
        return FunctionRef(fn, top=top or self.top_of.get(id(fn)), enclosing=enclosing, cls=cls,
                           bound=None if kind == "staticmethod" else bound, kind=kind)

    def class_value(self, name: str):
        info = self.classes.get(name)
        return ClassRef(info) if info is not None else None

    def method_value(self, info: ClassInfo | None, name: str, bound):
        if info is None:
            return None
        method, owner = find_method(self, info, name)
        if method is None:
            return None
        self.touch(method)
        if any((dotted(d.decorator) or "") in ("property", "functools.cached_property", "cached_property")
               for d in method.decorators):
            return None
        return self.function_value(method, top=self.top_of.get(id(method)), cls=owner, bound=bound)

    def single_global_binding(self, name: str):
        """The value expression of a module-level name bound exactly once (a model, an optimizer, a tensor)."""
        bindings = self.bindings.get(name)
        if not bindings or len(bindings) != 1 or bindings[0][0] is None:
            return None
        value, top = bindings[0]
        self.touch(top)
        return value

    def local_names_of(self, fn: cst.FunctionDef) -> set[str]:
        names = self._locals.get(id(fn))
        if names is None:
            names = set()
            for p in _all_params(fn.params):
                names.add(p)
            for stmt in walk_statements(fn.body.body if type(fn.body) is cst.IndentedBlock else []):
                _assigned_names(stmt, names)
            if type(fn.body) is cst.SimpleStatementSuite:
                for small in fn.body.body:
                    _assigned_names(cst.SimpleStatementLine([small]), names)
            self._locals[id(fn)] = names
        return names

    def global_decls_of(self, fn: cst.FunctionDef) -> set[str]:
        names = self._globals.get(id(fn))
        if names is None:
            names = set()
            for stmt in walk_statements(fn.body.body if type(fn.body) is cst.IndentedBlock else []):
                if type(stmt) is cst.SimpleStatementLine:
                    for small in stmt.body:
                        if type(small) in (cst.Global, cst.Nonlocal):
                            names.update(n.name.value for n in small.names)
            self._globals[id(fn)] = names
        return names

    def decorated_grad_mode(self, fn: cst.FunctionDef) -> str | None:
        from .calls import GRAD_CONTEXTS

        for deco in fn.decorators:
            target = deco.decorator.func if type(deco.decorator) is cst.Call else deco.decorator
            q = self.resolve_dotted(target)
            if q in GRAD_CONTEXTS:
                return GRAD_CONTEXTS[q]
            if q and ("no_grad" in q or "inference_mode" in q):
                return GRAD_OFF
            name = dotted(target) or ""
            if q is None and any(w in name for w in ("no_grad", "inference")):
                return GRAD_OFF
        return None

    def decorated_inference(self, fn: cst.FunctionDef):
        """The `@torch.inference_mode()` decorator of `fn` (its tensors are inference tensors), or None."""
        for deco in fn.decorators:
            call = deco.decorator
            target = call.func if type(call) is cst.Call else call
            q = self.resolve_dotted(target) or ""
            if "inference_mode" not in q:
                continue
            if type(call) is cst.Call and call.args:
                flag = call.args[0].value
                if not (type(flag) is cst.Name and flag.value == "True"):
                    return None  # `inference_mode(False)` or a flag we cannot read
            return call
        return None

    # ---- driving --------------------------------------------------------
    def run(self) -> Facts:
        self.facts.imports = self.imports
        signature = self._context_signature()
        if len(self.quiet_modules) < len(self.modules):
            if self.module_runs is None:
                self._run_module_code()
            else:
                module_facts = self._module_run(signature)
                self.facts.merge(module_facts)  # the same facts as a run into the file's own, in the same order
                self.facts.option_conditions.update(module_facts.option_conditions)
        file_facts = self.facts
        present = {id(m): m for m in self.modules}
        for module in self.modules:
            if id(module) in self.quiet_modules:
                continue
            if not any(type(stmt) in (cst.FunctionDef, cst.ClassDef) for stmt in module.body):
                continue
            info = self._single_class(module)
            if info is not None:
                self._run_class_members(module, info, signature, present, file_facts)
                continue
            # A def/class block run on its own depends on its text, the file's imports, the blocks it read
            # (functions it called, classes it built, module-level bindings), and how the names of those blocks
            # resolve at module level (a name it read as unbound may be defined since): cached on all of them.
            key = (id(module), signature)
            cached = self.block_cache.get(key) if self.block_cache is not None else None
            if cached is None or cached[0] is not module or not all(present.get(id(d)) is d for d in cached[2]) \
                    or (cached[3] is not None and not self._same_resolution(*cached[3])):
                self._start_cached_run()
                for stmt in module.body:
                    self._run_definitions(stmt, class_info=None, top=stmt)
                deps = tuple(self.deps - {module})
                cached = (module, self.facts, deps, self._resolution(module, deps))
                self.deps = None
                if self.block_cache is not None:
                    self.block_cache[key] = cached
                self.facts = file_facts
            file_facts.merge(cached[1])
        if self.called_names is not None:
            file_facts.problems = [p for p in file_facts.problems
                                   if p.detail.get("escape_of", "") not in self.called_names or not p.detail.get("escape_of")]
        return file_facts

    def _resolution(self, module: cst.Module, deps: tuple) -> tuple | None:
        """How the names of a cached run's blocks resolve at module level, to compare at reuse; None in a batch
        check, which runs each block once (nothing to record for a later edit)."""
        if self.module_runs is None:
            return None
        words = frozenset().union(*(self._words_of(m) for m in (module, *deps)))
        bound = self._names_bound()
        return words, {w: bound[w] for w in words if w in bound}

    def _start_cached_run(self) -> None:
        """A block's or a member's run on its own starts afresh: its own Facts, instances, summaries and budget."""
        self.facts = Facts()
        self.facts.imports = self.imports
        self.deps = set()
        self._instances = {}  # a run reads only instances it built (its deps stay complete)
        self.summaries = SummaryStore()
        self.steps = 0
        self.calls = 0
        self.budget_noted = set()

    def _single_class(self, module: cst.Module) -> ClassInfo | None:
        """The class a block holds alone (the usual `class Net(nn.Module):` block), whose members run apart."""
        if len(module.body) != 1 or type(module.body[0]) is not cst.ClassDef \
                or type(module.body[0].body) is not cst.IndentedBlock:
            return None
        info = self.classes.get(module.body[0].name.value)
        return info if info is not None and info.node is module.body[0] else None

    def _run_class_members(self, module: cst.Module, info: ClassInfo, signature: tuple, present: dict,
                           file_facts: Facts) -> None:
        """Each member of a class block (a method, a nested class, a class-level statement holding defs) runs on
        its own, with an instance of its own built by running `__init__` (a member never sees what another
        member's run did to an instance), and its own budget. Its Facts are cached on its node, the modes its
        definitions run in, the class's header (bases, decorators, class-level statements, member names, and
        `__init__`), the members and other blocks it read, and how their names resolve: an edit inside one
        method re-runs that method and the members that read it, not the class."""
        cls = module.body[0]
        members = cls.body.body
        header = self._class_header(cls)
        member_of = self._members_index(module, cls)
        current = {id(item): item for item in members}
        plan = []
        for item in members:
            modes: list = []
            self._definition_modes(item, modes)
            if not modes:
                continue
            key = ("member", id(item), signature, tuple(modes))
            cached = self.block_cache.get(key) if self.block_cache is not None else None
            if cached is None or cached[0] is not item or not _same_nodes(cached[4], header) \
                    or not all(present.get(id(d)) is d for d in cached[2]) \
                    or not all(current.get(id(m)) is m for m in cached[3]) \
                    or (cached[5] is not None and not self._same_resolution(*cached[5])):
                cached = None
            plan.append((item, key, cached, modes))
        # how many methods run now on an instance of their own: the last one takes its build, not a copy
        self._instance_needs[id(info)] = sum(
            1 for item, _key, cached, modes in plan
            if cached is None and type(item) is cst.FunctionDef and item.name.value != "__init__"
            and (modes[0] or self.describe_quiet))
        for item, key, cached, _modes in plan:
            if cached is None:
                self._start_cached_run()
                self.members_ran.append(f"{cls.name.value}.{getattr(getattr(item, 'name', None), 'value', '')}")
                self._member_class, self._member_of, self.member_deps = cls, member_of, set()
                try:
                    self._run_definitions(item, info, cls)
                finally:
                    self._member_class = None
                deps = tuple(self.deps - {module})
                cached = (item, self.facts, deps, tuple(self.member_deps - {item}), header,
                          self._resolution(module, deps))
                self.deps = None
                if self.block_cache is not None:
                    self.block_cache[key] = cached
                self.facts = file_facts
            file_facts.merge(cached[1])

    @staticmethod
    def _class_header(cls: cst.ClassDef) -> tuple:
        """What every member's run reads of its class: bases, keywords, decorators, the class-level statements
        that are not defs, the members' names in order, and `__init__` (every method's instance runs it)."""
        out: list = [*cls.bases, *cls.keywords, *cls.decorators]
        names = []
        for item in cls.body.body:
            if type(item) in (cst.FunctionDef, cst.ClassDef):
                names.append(item.name.value)
                if item.name.value == "__init__":
                    out.append(item)
            else:
                out.append(item)
        out.append(tuple(names))
        return tuple(out)

    def _members_index(self, module: cst.Module, cls: cst.ClassDef) -> dict:
        """id(definition) -> the member of `cls` holding it (the member itself included), kept with the parse."""
        key = ("members", id(module))
        entry = self.block_index.get(key) if self.block_index is not None else None
        if entry is None or entry[0] is not module:
            index: dict[int, cst.CSTNode] = {}
            for item in cls.body.body:
                index[id(item)] = item
                nested: dict[int, cst.CSTNode] = {}
                self._index_tops(item, nested)
                for node_id in nested:
                    index[node_id] = item
            entry = (module, index)
            if self.block_index is not None:
                self.block_index[key] = entry
        return entry[1]

    def _definition_modes(self, stmt: cst.CSTNode, out: list) -> None:
        """Whether each definition `_run_definitions(stmt)` meets writes (so runs reporting), in its order."""
        if type(stmt) is cst.FunctionDef:
            out.append(self.function_writes(stmt))
            for inner in walk_statements(stmt.body.body if type(stmt.body) is cst.IndentedBlock else []):
                if inner is not stmt and type(inner) in (cst.FunctionDef, cst.ClassDef):
                    self._definition_modes(inner, out)
        elif type(stmt) is cst.ClassDef:
            out.append(None)
            for inner in stmt.body.body if type(stmt.body) is cst.IndentedBlock else ():
                self._definition_modes(inner, out)
        elif isinstance(stmt, cst.BaseCompoundStatement):
            for inner in walk_statements([stmt]):
                if inner is not stmt and type(inner) in (cst.FunctionDef, cst.ClassDef):
                    self._definition_modes(inner, out)

    def note_budget_cut(self, scope, node, budget: str, message: str) -> None:
        """The first cut of a budget ("statements", "calls", "depth") in this run: where it happened (a statement
        or a call) and what it left unchecked."""
        if budget in self.budget_noted or node is None:
            return
        self.budget_noted.add(budget)
        scope.facts.budget_cuts.append((node, scope.top, message))

    def _run_module_code(self) -> None:
        """Interpret the module's statements in order, into `self.facts`."""
        from .scope import Scope

        self.module_code_ran = True
        module_scope = Scope(self, kind="module", grad=GRAD_ON)
        for stmt in self.statements:
            module_scope.top = stmt
            module_scope.run_stmt(stmt)
        module_scope.settle_unknown_grad()
        module_scope.finish()

    def _module_run(self, signature: tuple) -> Facts:
        """The Facts of the module-level run, reused from this document's last run when it could read nothing that
        changed. The run reaches a def or class only through its name, so what it can read is every block of
        module-level code and, transitively, each def/class block whose name the code read so far names outside
        strings and comments (`_module_reads`). An edit inside a function no such code names leaves those blocks
        as they were, and the run is reused; any other edit runs it again."""
        reads = self._module_reads()
        entry = self.module_runs.get(self.document)
        if entry is not None and entry[0] == signature and _same_reads(entry[1], reads):
            return entry[2]
        file_facts = self.facts
        self.facts = Facts()
        self.facts.imports = self.imports
        try:
            self._run_module_code()
            facts = self.facts
        finally:
            self.facts = file_facts
        self.module_runs[self.document] = (signature, reads, facts)
        return facts

    def _module_reads(self) -> tuple:
        """What the module-level run can read, in file order: each block it may interpret (module-level code, and
        the def/class blocks named by what it may interpret) as itself, and between them the number of top-level
        statements of the other blocks (running a def statement only binds its name, but counts against the
        statement budget, and the budget decides how often loops run)."""
        infos = [self._block_reads_info(m) for m in self.modules]
        defined: dict[str, list[int]] = {}
        reached = set()
        pending = []
        for i, (is_definition, names, _words) in enumerate(infos):
            if is_definition:
                for name in names:
                    defined.setdefault(name, []).append(i)
            else:
                reached.add(i)
                pending.append(i)
        while pending:
            i = pending.pop()
            for word in self._words_of(self.modules[i]):
                for j in defined.get(word, ()):
                    if j not in reached:
                        reached.add(j)
                        pending.append(j)
        out: list = []
        skipped = 0
        for i, module in enumerate(self.modules):
            if i in reached:
                if skipped:
                    out.append(skipped)
                    skipped = 0
                out.append(module)
            else:
                skipped += len(module.body)
        if skipped:
            out.append(skipped)
        return tuple(out)

    def _block_reads_info(self, module: cst.Module) -> list:
        """[whether the block is only defs/classes, the names they bind, its code words (filled when needed)],
        kept across edits with the block's parse when an index is given."""
        key = ("reads", id(module))
        entry = self.block_index.get(key) if self.block_index is not None else None
        if entry is None or entry[0] is not module:
            body = module.body
            is_definition = bool(body) and all(type(stmt) in (cst.FunctionDef, cst.ClassDef) for stmt in body)
            names = [stmt.name.value for stmt in body] if is_definition else []
            entry = (module, [is_definition, names, None])
            if self.block_index is not None:
                self.block_index[key] = entry
        return entry[1]

    def _words_of(self, module: cst.Module) -> frozenset:
        """The block's code words (`parse.code_words`), remembered with its parse."""
        info = self._block_reads_info(module)
        if info[2] is None:
            info[2] = self._block_words(module)
        return info[2]

    def _names_bound(self) -> dict:
        """How a run on its own resolves each name the module binds: (a def of that name, a class of this file, its
        module-level bindings as whether each has a value; `single_global_binding` reads only a single one)."""
        if self._bound is None:
            bound: dict[str, list] = {}
            for name in self.functions:
                bound[name] = [True, False, ()]
            for name, info in self.classes.items():
                if not info.external:
                    bound.setdefault(name, [False, False, ()])[1] = True
            for name, items in self.bindings.items():
                bound.setdefault(name, [False, False, ()])[2] = tuple(value is not None for value, _top in items)
            self._bound = {name: tuple(value) for name, value in bound.items()}
        return self._bound

    def _same_resolution(self, words: frozenset, resolved: dict) -> bool:
        """Whether the names among `words` that the module binds, and how, are those `resolved` recorded."""
        bound = self._names_bound()
        hits = [w for w in words if w in bound] if len(words) <= len(bound) else [w for w in bound if w in words]
        return len(hits) == len(resolved) and all(bound[w] == resolved.get(w) for w in hits)

    def _block_words(self, module: cst.Module) -> frozenset:
        from ..parse import code_words

        text = self.texts.get(id(module))
        if text is None:
            text = module.code
        return frozenset(code_words(text))

    def release(self) -> None:
        """Forget everything but `facts`: the scopes' environments and this analysis's indexes of the parsed
        trees. For a caller done with the run (a batch check, after its rules)."""
        for scope in list(self.scopes):
            scope.__dict__.clear()
        facts = self.facts
        self.__dict__.clear()
        self.facts = facts

    def quiet_run(self, quiet: bool) -> "_QuietRun":
        """While set, problems found are not reported (a run made only to describe names)."""
        return _QuietRun(self, quiet)

    def _context_signature(self) -> tuple:
        externals = tuple(sorted((c.name, c.is_module, c.param_layers, c.unknown_children, tuple(sorted(c.attrs)))
                                 for c in self.classes.values() if c.external))
        return (tuple(sorted(self.imports.items())), externals)

    def function_writes(self, fn: cst.FunctionDef) -> bool:
        """Whether `fn`'s own code (not its nested defs) holds something that can go wrong: an in-place write,
        a `.data` access, an `inplace`/`out=` argument, a step or a backward. A function without any can only
        go wrong through what it calls, and each function that writes is run on its own too."""
        known = self._writes.get(id(fn))
        if known is None:
            self._writes[id(fn)] = (fn, False)  # a recursion guard while its callees are asked
            # the text test is a superset of the tree walk (it also matches comments, docstrings, `x: T[int] = 0`):
            # a function whose text cannot match is skipped without walking its tree
            hot = self._text_writes(fn)
            writes = hot is not False and self._own_writes(fn)
            if not writes:
                writes = self._calls_writing_code(fn)
            known = self._writes[id(fn)] = (fn, writes)
        return known[1]

    def _own_writes(self, fn: cst.FunctionDef) -> bool:
        """`_writes_in(fn.body)`, kept across edits with the function's node (each check asks it of every member)."""
        key = ("writes", id(fn))
        entry = self.block_index.get(key) if self.block_index is not None else None
        if entry is None or entry[0] is not fn:
            entry = (fn, _writes_in(fn.body))
            if self.block_index is not None:
                self.block_index[key] = entry
        return entry[1]

    def _calls_writing_code(self, fn: cst.FunctionDef) -> bool:
        """`forward` that only calls `self.attn_drop(x)` (an `nn.Dropout(inplace=True)` built in `__init__`) or a
        helper that writes: what can go wrong happens in code it calls, with the tensors it passes."""
        top = self.top_of.get(id(fn))
        info = None
        if type(top) is cst.ClassDef:
            info = self.classes.get(top.name.value)
            if info is not None and info.node is not top:
                info = None
        chunk = self._chunks.get(id(fn), "")
        called = self._called_in_text(fn, chunk) if chunk else None
        if info is not None:
            init = info.methods.get("__init__")
            if init is not None and init is not fn and "self." in chunk and self._init_shapes_layers(init):
                return True  # its layers may be in place (or frozen, or built under inference_mode) by `__init__`
            for name, method in info.methods.items():
                if method is not fn and (called is None or name in called) and self.function_writes(method):
                    return True
        for name, other in self.functions.items():
            if other is not fn and called is not None and name in called and self.function_writes(other):
                return True
        return False

    def _init_shapes_layers(self, init: cst.FunctionDef) -> bool:
        """`_shapes_layers` of a class's `__init__`, remembered: each method of the class asks it."""
        known = self._init_shapes.get(id(init))
        if known is None:
            known = self._init_shapes[id(init)] = self._shapes_layers(init, set())
        return known

    def _shapes_layers(self, fn: cst.FunctionDef, seen: set) -> bool:
        """Whether `fn` (an `__init__`), or same-file code it calls, may build layers whose behaviour decides
        what a `forward` alone can get wrong: in place, frozen, or made under inference_mode. Weight
        initialisation (`nn.init.trunc_normal_`, `.zero_()`) writes too, but changes nothing a forward does."""
        if id(fn) in seen:
            return False
        seen.add(id(fn))
        self._text_writes(fn)  # cuts the function's text out of its block
        chunk = self._chunks.get(id(fn))
        if chunk is None:
            return self.function_writes(fn)  # its text cannot be cut out: the tree walk decides, as before
        if _SHAPES_LAYERS.search(chunk):
            return True
        for name in self._called_in_text(fn, chunk):
            other = self.functions.get(name)
            if other is None and name in self.classes and not self.classes[name].external:
                other = self.classes[name].methods.get("__init__")
            if other is not None and other is not fn and self._shapes_layers(other, seen):
                return True
        return False

    def _called_in_text(self, fn: cst.FunctionDef, chunk: str) -> set:
        """The names `fn`'s text calls (`helper(`, `.forward(`), remembered per function."""
        called = self._called_by.get(id(fn))
        if called is None:
            called = self._called_by[id(fn)] = set(_CALLED.findall(chunk))
        return called

    def _text_writes(self, fn: cst.FunctionDef) -> bool | None:
        """The same question asked of the function's text in its block (a regex, much cheaper than walking its
        tree); None when the text cannot be cut out unambiguously. Remembered per function."""
        known = self._text_hot.get(id(fn), _UNSET)
        if known is _UNSET:
            known = self._text_hot[id(fn)] = self._cut_text(fn)
        return known

    def _cut_text(self, fn: cst.FunctionDef) -> bool | None:
        top = self.top_of.get(id(fn))
        module = self.module_of.get(id(top)) if top is not None else None
        text = self.texts.get(id(module)) if module is not None else None
        if not text:
            return None
        index = self._def_heads.get(id(module))
        if index is None:
            index = self._def_heads[id(module)] = {}
            for m in _DEF_HEAD.finditer(text):
                index.setdefault(m.group(2), []).append(m)
        heads = index.get(fn.name.value, ())
        if len(heads) != 1:
            return None
        head = heads[0]
        indent = len(head.group(1))
        newline = text.find("\n", head.end())
        end = _def_end(indent).search(text, newline) if newline >= 0 else None  # the first line back at its indent
        chunk = text[head.start():end.start() + 1 if end is not None else len(text)]
        self._chunks[id(fn)] = chunk
        return bool(FUNCTION_HINT.search(chunk))

    def _run_definitions(self, stmt: cst.CSTNode, class_info: ClassInfo | None, top: cst.CSTNode) -> None:
        if type(stmt) is cst.FunctionDef:
            quiet = not self.function_writes(stmt)
            if quiet and not self.describe_quiet:
                pass  # nothing to find on its own; calls from code that runs still interpret it
            elif class_info is not None and stmt.name.value == "__init__":
                with self.quiet_run(quiet):
                    self.abstract_instance(class_info, top)  # running __init__ is what building the instance does
            else:
                with self.quiet_run(quiet):
                    self._run_function(stmt, class_info, top)
            for inner in walk_statements(stmt.body.body if type(stmt.body) is cst.IndentedBlock else []):
                if inner is not stmt and type(inner) in (cst.FunctionDef, cst.ClassDef):
                    self._run_definitions(inner, None, top)
        elif type(stmt) is cst.ClassDef:
            info = self.classes.get(stmt.name.value)
            if info is not None and info.node is not stmt:
                info = None
            for inner in stmt.body.body if type(stmt.body) is cst.IndentedBlock else ():
                self._run_definitions(inner, info, top)
        elif isinstance(stmt, cst.BaseCompoundStatement) and type(stmt) not in (cst.FunctionDef, cst.ClassDef):
            for inner in walk_statements([stmt]):
                if inner is not stmt and type(inner) in (cst.FunctionDef, cst.ClassDef):
                    self._run_definitions(inner, None, top)

    def _run_function(self, fn: cst.FunctionDef, class_info: ClassInfo | None, top) -> None:
        from .scope import Scope

        scope = Scope(self, kind="function", grad=self._function_grad_mode(fn, class_info), function=fn,
                      class_info=class_info, top=top)
        scope.bind_parameters(fn)
        params = list(fn.params.posonly_params) + list(fn.params.params)
        is_static = any((dotted(d.decorator) or "") == "staticmethod" for d in fn.decorators)
        if class_info is not None and params and not is_static and params[0].name.value in ("self", "cls"):
            name = params[0].name.value
            scope.params.discard(name)
            if name == "self":
                instance = self.abstract_instance(class_info, top, recording=False)
                if instance is not None:
                    scope.env["self"] = instance
                    scope.self_value = instance
        scope.calls.run_suite(scope, fn.body)
        scope.settle_unknown_grad()
        scope.finish()

    def abstract_instance(self, info: ClassInfo, top, recording: bool = True):
        """An instance built by running `__init__` with unknown arguments (defaults where given). Recording: the
        build is `__init__`'s own run (its Facts are the run's); otherwise it is a method's `self`, an instance of
        its own whose build records nothing (a copy of this check's template of the class, when exact)."""
        if info.is_function or info.external:
            return None
        cached = self._instances.get(id(info))
        if cached is not None and (cached[2] or not self.silent):
            obj, snapshot, _ = cached
            _restore(snapshot)  # what an earlier method's run changed on it (flags, attributes) is undone
            return obj
        obj = self._recorded_instance(info, top) if recording else self._unrecorded_instance(info, top)
        if obj is not None and hasattr(obj, "name"):
            obj.name = "self"
        if obj is not None:
            self._instances[id(info)] = (obj, _snapshot(obj), not self.silent or not recording)
        return obj

    def _build_instance(self, info: ClassInfo, top):
        from .scope import Scope

        builder = Scope(self, kind="function", grad=GRAD_ON, class_info=info, top=top)
        obj = builder.calls.instantiate(builder, info, [], {}, info.node)
        builder.settle_unknown_grad()
        builder.finish()
        return obj

    def _build_apart(self, info: ClassInfo, top, recording: bool) -> tuple:
        """(instance, the blocks and members its build read): the build's reads kept apart, for its copies to take;
        unrecorded, into Facts of its own (the budget cuts it meets stay the run's)."""
        facts = self.facts
        if not recording:
            self.facts = Facts()
            self.facts.imports = self.imports
        deps, self.deps = self.deps, (set() if self.deps is not None else None)
        member_deps, self.member_deps = self.member_deps, set()
        try:
            obj = self._build_instance(info, top)
        finally:
            built, self.deps = self.deps, (deps | self.deps if deps is not None else None)
            built_members, self.member_deps = self.member_deps, member_deps | self.member_deps
            if not recording:
                facts.budget_cuts.extend(self.facts.budget_cuts)
                self.facts = facts
        return obj, built or set(), built_members

    def _fresh_budget(self) -> bool:
        return self.steps == 0 and self.calls == 0 and not self.budget_noted

    def _offer_template(self, info: ClassInfo, obj, fresh: bool, deps: set, member_deps: set) -> bool:
        """Keep a build that started from a fresh budget and met no limit as the class's template for this check."""
        if id(info) in self._templates or not fresh or obj is None or self.budget_noted \
                or self.steps > self.max_steps // 2 or self.calls >= self.max_calls:
            return False
        self._templates[id(info)] = (obj, self.steps, self.calls, deps, member_deps)
        return True

    def _recorded_instance(self, info: ClassInfo, top):
        """`__init__`'s own run builds the instance; the build serves its methods' copies too."""
        fresh = self._fresh_budget()
        obj, deps, member_deps = self._build_apart(info, top, recording=True)
        self._offer_template(info, obj, fresh, deps, member_deps)
        return obj

    def _unrecorded_instance(self, info: ClassInfo, top):
        """A method's own instance: a build whose findings are `__init__`'s run's to report, or a copy of this
        check's template of the class (a build that started, as this one, from a method's fresh budget: the copy is
        charged its steps and calls and takes its reads). The last method to need one takes the build itself."""
        fresh = self._fresh_budget()
        later = self._instance_needs.get(id(info), 2) - 1
        self._instance_needs[id(info)] = later
        template = self._templates.get(id(info))
        if template is not None and fresh:
            obj, steps, calls, deps, member_deps = template
            try:
                copy = _instance_copy(obj)
            except _NotSummarisable:
                copy = None
                self._templates[id(info)] = None  # not copied faithfully: each method builds its own
            if copy is not None:
                self.steps += steps
                self.calls += calls
                if self.deps is not None:
                    self.deps |= deps
                    self.member_deps |= member_deps
                return copy
        obj, deps, member_deps = self._build_apart(info, top, recording=False)
        if later > 0 and self._offer_template(info, obj, fresh, deps, member_deps):
            try:  # the template is never handed out: a method's run changes its instance
                return _instance_copy(obj)
            except _NotSummarisable:
                self._templates[id(info)] = None
        return obj

    def _function_grad_mode(self, fn: cst.FunctionDef, class_info: ClassInfo | None) -> str:
        mode = self.decorated_grad_mode(fn)
        if mode is not None:
            return mode
        if class_info is not None and class_info.is_module and fn.name.value in GRAD_METHODS:
            return GRAD_ON
        if class_info is not None and fn.name.value == "__init__":
            return GRAD_ON
        return GRAD_UNKNOWN


def _instance_copy(obj):
    """A copy of a built instance with objects of its own, its writes as they were (same paths: `self` is built
    outside any branch); raises _NotSummarisable for what cannot be copied faithfully."""
    return _Copier((), (), (), (), keep_dtype=True, writes=True).value(obj)


def _same_nodes(old: tuple, new: tuple) -> bool:
    """The same nodes (the very parsed objects), and equal plain values between them."""
    return len(old) == len(new) and all(a is b or type(a) is tuple and a == b for a, b in zip(old, new))


def _same_reads(old: tuple, new: tuple) -> bool:
    """The same blocks (the very parsed modules) and the same statement counts between them."""
    return len(old) == len(new) and all(a is b if type(a) is not int else a == b for a, b in zip(old, new))


def _snapshot(root) -> list:
    """The mutable state of an abstract instance and everything it holds: restored before each reuse."""
    from .model import Instance, Module, Seq

    out, seen, stack = [], set(), [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, Module):
            out.append((obj, dict(obj.attrs), obj.inplace, obj.frozen, obj.grads, obj.opaque,
                        list(obj.children) if obj.children is not None else None, obj.has_params, obj.eval_path))
            stack.extend(obj.attrs.values())
            stack.extend(obj.children or ())
        elif isinstance(obj, Instance):
            out.append((obj, dict(obj.attrs)))
            stack.extend(obj.attrs.values())
        elif isinstance(obj, Seq) and obj.items is not None:
            stack.extend(obj.items)
    return out


def _restore(snapshot: list) -> None:
    for entry in snapshot:
        obj = entry[0]
        obj.attrs.clear()
        obj.attrs.update(entry[1])
        if len(entry) > 2:
            obj.inplace, obj.frozen, obj.grads, obj.opaque = entry[2:6]
            obj.children = list(entry[6]) if entry[6] is not None else None
            obj.has_params, obj.eval_path = entry[7:9]


_CALLED = re.compile(r"\b(?=([A-Za-z_]\w*))\1\s*\(")  # the word taken whole (see engine.CALLED_NAME)
# What in an `__init__` changes how its layers behave in `forward` (see FileAnalysis._shapes_layers).
_SHAPES_LAYERS = re.compile(r"inplace|requires_grad|inference_mode|register_\w*hook")
_UNSET = object()


class _QuietRun:
    """The context of `FileAnalysis.quiet_run`. A module-level class: a class made per call is cyclic garbage, and
    its closure held the analysis and every parsed tree of the file until the next full collection."""

    __slots__ = ("analysis", "quiet", "saved")

    def __init__(self, analysis: "FileAnalysis", quiet: bool):
        self.analysis = analysis
        self.quiet = quiet

    def __enter__(self):
        self.saved = self.analysis.silent
        self.analysis.silent = self.saved or self.quiet

    def __exit__(self, *exc):
        self.analysis.silent = self.saved
        return False


@functools.lru_cache(maxsize=None)
def _def_end(indent: int) -> re.Pattern:
    """The end of a def indented `indent` deep: a line at that indent or less starting code. It starts with the
    newline before that line: a literal first character lets the regex engine skip ahead (a `^` in multiline
    mode was tried at every character)."""
    return re.compile(r"\n[ \t]{0,%d}(?=[A-Za-z_@])" % indent)


_DEF_HEAD = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
# The text form of `_writes_in` (the engine's block WRITE_HINT, plus autograd.grad and in-place-by-position layers).
FUNCTION_HINT = re.compile(r"[A-Za-z0-9]_\s*\(|[-+*/@%&|^]=|<<=|>>=|retain_graph|create_graph|\bstep\s*\(|\]\s*=[^=]|\bout\s*=|inplace|\.step\(|backward|\.data\b"
                           r"|\bgrad\(|\b(?:ReLU6?|LeakyReLU|ELU|SELU|CELU|RReLU|Hardtanh|Threshold|Dropout[123]?d?"
                           r"|AlphaDropout|SiLU|Hardswish|Hardsigmoid|Mish)\(\s*[^)\s]")
_WRITE_CALLS = {"step", "backward", "manual_backward", "grad", "copy_", "requires_grad_"}
_WRITE_KEYWORDS = {"inplace", "out", "retain_graph", "create_graph"}


def _writes_in(body) -> bool:
    """A CST walk of a function body (nested defs and classes aside) for the shapes of trouble."""
    from .expressions import children

    stack = [body]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind in _LEAVES:
            continue
        if kind is cst.Name:
            if node.value == "inplace":
                return True
            continue
        if kind is cst.FunctionDef or kind is cst.ClassDef:
            if node is not body:
                continue
        elif kind is cst.AugAssign:
            return True
        elif kind is cst.Assign:
            if any(type(t.target) is cst.Subscript for t in node.targets):
                return True
        elif kind is cst.AnnAssign:
            if type(node.target) is cst.Subscript:
                return True
        elif kind is cst.Call:
            func = node.func
            name = func.attr.value if type(func) is cst.Attribute else (func.value if type(func) is cst.Name else "")
            if (name[-1:] == "_" and name[:1] != "_") or name in _WRITE_CALLS:
                return True
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value in _WRITE_KEYWORDS:
                    return True
            if name in _INPLACE_BY_POSITION and node.args:
                return True  # `nn.ReLU(True)`: in place by position
        elif kind is cst.Attribute:
            if node.attr.value in ("data", "inplace"):
                return True
        extend(children(node))
    return False


_LEAVES = frozenset({cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Comment, cst.Newline,
                     cst.EmptyLine, cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace,
                     cst.Pass, cst.Ellipsis, cst.Break, cst.Continue})
_INPLACE_BY_POSITION = frozenset({"ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "RReLU", "Hardtanh",
                                  "Threshold", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "SiLU", "Hardswish", "Hardsigmoid", "Mish"})


def _is_main_guard(test) -> bool:
    return type(test) is cst.Comparison and any(type(n) is cst.Name and n.value == "__name__"
                                                     for n in (test.left,))


def _all_params(params: cst.Parameters) -> list[str]:
    out = [p.name.value for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params)]
    if type(params.star_arg) is cst.Param:
        out.append(params.star_arg.name.value)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg.name.value)
    return out


def _target_names(target) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [n for e in target.elements for n in _target_names(e.value)]
    if type(target) is cst.StarredElement:
        return _target_names(target.value)
    return []


def _assigned_names(stmt, names: set) -> None:
    if type(stmt) is cst.SimpleStatementLine:
        for small in stmt.body:
            if type(small) is cst.Assign:
                for t in small.targets:
                    names.update(_target_names(t.target))
            elif type(small) in (cst.AugAssign, cst.AnnAssign):
                names.update(_target_names(small.target))
            elif type(small) in (cst.Import, cst.ImportFrom):
                if type(small) is cst.Import or type(small.names) is not cst.ImportStar:
                    for alias in small.names:
                        if alias.asname is not None and type(alias.asname.name) is cst.Name:
                            names.add(alias.asname.name.value)
                        else:
                            names.add((dotted(alias.name) or "").split(".")[0])
    elif type(stmt) is cst.For:
        names.update(_target_names(stmt.target))
    elif type(stmt) is cst.With:
        for item in stmt.items:
            if item.asname is not None:
                names.update(_target_names(item.asname.name))
    elif type(stmt) in (cst.FunctionDef, cst.ClassDef):
        names.add(stmt.name.value)
    elif type(stmt) is cst.Try:
        for handler in stmt.handlers:
            if handler.name is not None and type(handler.name.name) is cst.Name:
                names.add(handler.name.name.value)
