"""A training project as one program: the definitions an entry file imports from the user's other files.

`train.py` calls `nt_xent(z1, z2)` imported from `losses.py`, which writes `z1` in place. Checked file by file,
neither half shows the bug. `ProjectLinker.link` reads (never imports) the project files an entry file imports
from, follows packages, re-exports, relative imports and `src/` layouts, and returns the definitions the entry
reaches (with the helpers, constants and library imports they read in their own files) as verbatim chunks of
whole lines. The engine appends those chunks after the entry's text and analyses the whole as one program, so a
call across files is interpreted with the caller's values exactly as a call inside one file is; `LinkedProgram`
then says which file and line each appended line came from.

A definition is linked only when its name means the same thing everywhere in the joined program: a name the
entry (or another linked file) already defines, or a library alias (`F`, `nn`) that a linked file binds to
something else, leaves that import unlinked (as before: an imported class is summarised, a function unknown),
with a note. Nothing here runs code: files are read through the engine's guarded reader and parsed with `ast`.
"""
from __future__ import annotations

import ast
import bisect
import builtins
import os
import re
import symtable
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT_MARKERS = ("pyproject.toml", ".git", "setup.py", "setup.cfg")
MAX_PARENTS = 6  # how far up from the importer a project root (or an absolute import's package) is looked for
MAX_LINKED_FILES = 64
MAX_LINKED_LINES = 50_000
MAX_DEPTH = 8  # re-exports and imports followed through this many files
RESOLUTION_TTL = 2.0  # seconds an import's file lookup is reused (an editor re-checks on every keystroke)
# Top-level packages looked up nowhere in the project: the standard library's and torch's. Others (`datasets`,
# `utils`, `models`) are often the user's own files, which shadow the installed package of that name at run time.
LIBRARY_ROOTS = frozenset({"torch", "torchvision", "torchaudio", "numpy", "os", "sys", "math", "random", "typing",
                           "collections", "functools", "itertools", "dataclasses", "pathlib", "json", "re", "time",
                           "argparse", "abc", "copy", "warnings", "contextlib", "enum", "inspect", "__future__"})


@dataclass(frozen=True)
class Chunk:
    """Whole lines of a project file, copied verbatim into the joined program."""

    path: str
    start_line: int  # 0-based first line in `path`
    text: str  # ends with a newline

    @property
    def lines(self) -> int:
        return self.text.count("\n")


@dataclass
class LinkedNames:
    """What the analysis must know of the linked definitions: import bindings they replace."""

    names: frozenset = frozenset()  # local names the entry imported that a linked definition now binds
    aliases: dict = field(default_factory=dict)  # `ntx` (from `import nt_xent as ntx`) -> `nt_xent`
    qualnames: dict = field(default_factory=dict)  # `losses.nt_xent` (through `import losses`) -> `nt_xent`


@dataclass
class LinkedProgram:
    """The chunks that follow the entry's text, and where each joined line comes from."""

    entry_path: str
    entry_lines: int  # lines of the entry text; the chunks start on this 0-based line
    chunks: list[Chunk] = field(default_factory=list)
    linked: LinkedNames = field(default_factory=LinkedNames)
    files: set = field(default_factory=set)  # every project file read or looked for (cache dependencies)
    read_texts: dict = field(default_factory=dict)  # path -> hash of the text read there (an editor re-runs on change)
    notes: list = field(default_factory=list)  # imports not linked for a clash of names, and why
    budget_notes: list = field(default_factory=list)  # (entry line, why) of imports a budget cut

    def __post_init__(self):
        self._starts: list[int] = []

    def joined(self, entry_text: str) -> str:
        """The entry's text (newline-terminated) followed by every chunk."""
        self._starts = []
        line = self.entry_lines
        for chunk in self.chunks:
            self._starts.append(line)
            line += chunk.lines
        head = entry_text if entry_text.endswith("\n") or not entry_text else entry_text + "\n"
        return head + "".join(chunk.text for chunk in self.chunks)

    def locate(self, line: int) -> tuple[str, int]:
        """(file, 0-based line in it) of a 0-based line of the joined program."""
        if line < self.entry_lines or not self._starts:
            return self.entry_path, line
        i = bisect.bisect_right(self._starts, line) - 1
        chunk = self.chunks[i]
        return chunk.path, chunk.start_line + line - self._starts[i]


@dataclass
class _FileIndex:
    """What linking needs of one project file, from one `ast` parse: its top-level statements by kind."""

    path: str
    lines: list
    definitions: dict  # name -> (first line, end line) of a top-level def/class (decorators included)
    assigned: dict  # name -> [(first line, end line)] of top-level simple assignments binding it
    imports: list  # (first line, end line, [import records]) of each top-level import statement
    all_names: set  # every name bound at top level (collision checks)
    runs_code: bool = False  # a script's shape: a `__main__` guard, a loop, a `with` or a call at top level
    free: dict = field(default_factory=dict)  # name -> the globals its definition reads (`_free_globals`), lazily
    # folders a script adds to its import path with a literal (`sys.path.insert(0, "src")`, `sys.path.append("..")`)
    search_paths: tuple = ()


@dataclass(frozen=True)
class _Import:
    local: str  # the name bound in the importing file
    module: str  # dotted module, without the leading dots
    level: int  # relative import dots
    name: str | None  # the imported name (`from m import name`), None for `import m`
    star: bool = False


def import_records(tree: ast.AST) -> list:
    """The import records of a module's top-level statements (and `try:`/`if` bodies at top level)."""
    out = []
    for node in _top_statements(tree):
        out.extend(_records_of(node))
    return out


def _top_statements(tree):
    stack = list(reversed(getattr(tree, "body", [])))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            inner = list(node.body) + list(getattr(node, "orelse", []))
            for handler in getattr(node, "handlers", []):
                inner.extend(handler.body)
            inner.extend(getattr(node, "finalbody", []))
            stack.extend(reversed(inner))


def _records_of(node) -> list:
    if isinstance(node, ast.Import):
        out = []
        for alias in node.names:
            if alias.asname:
                out.append(_Import(alias.asname, alias.name, 0, None))
            else:
                head = alias.name.split(".")[0]
                out.append(_Import(head, head, 0, None))
        return out
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        if any(a.name == "*" for a in node.names):
            return [_Import("*", module, node.level, None, star=True)]
        return [_Import(a.asname or a.name, module, node.level, a.name) for a in node.names]
    return []


def _first_line(node) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators]) - 1


def _bound_names(node) -> list:
    if isinstance(node, ast.Assign):
        return [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def index_text(path: str, text: str) -> _FileIndex | None:
    """A file's top-level definitions, assignments and imports; None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = text.split("\n")
    definitions, assigned, imports, all_names = {}, {}, [], set()
    runs_code = any(_runs_code(node) for node in tree.body)
    search_paths = tuple(p for node in tree.body for p in _sys_path_literal(node))
    for node in tree.body:
        start, end = _first_line(node), node.end_lineno
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            definitions.setdefault(node.name, (start, end))
            all_names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            records = _records_of(node)
            imports.append((start, end, records))
            all_names.update(r.local for r in records if not r.star)
        else:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                for name in _bound_names(node):
                    assigned.setdefault(name, []).append((start, end))
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                    all_names.add(inner.id)
                elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    all_names.add(inner.name)
                elif isinstance(inner, (ast.Import, ast.ImportFrom)):
                    all_names.update(r.local for r in _records_of(inner) if not r.star)
    return _FileIndex(path, lines, definitions, assigned, imports, all_names, runs_code, search_paths=search_paths)


def _sys_path_literal(node) -> list:
    """The literal folder of a top-level `sys.path.insert(i, "dir")` / `sys.path.append("dir")`."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return []
    call = node.value
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("insert", "append")
            and isinstance(func.value, ast.Attribute) and func.value.attr == "path"
            and isinstance(func.value.value, ast.Name) and func.value.value.id == "sys"):
        return []
    arg = call.args[-1] if call.args else None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value and "\0" not in arg.value:
        return [arg.value]
    return []


# Module-level calls a library makes at import time (registries, warnings, logging): not a script's work
_LIBRARY_CALL = re.compile(r"register|warn|logging|logger|getLogger|basicConfig|setLevel|__all__|_?export")


def _runs_code(node) -> bool:
    """Whether a top-level statement is a script's work: the `__main__` guard, a loop, a `with`, a call statement
    (not a docstring, not a library's registration or logging call), or a test function."""
    if isinstance(node, ast.If):
        test = node.test
        return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return not _LIBRARY_CALL.search(ast.unparse(node.value.func))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name.startswith("test_")
    return False


_WORD = re.compile(r"[A-Za-z_]\w*")


def _words(text: str) -> set:
    return set(_WORD.findall(text))


class ProjectLinker:
    """Links the project definitions an entry file reaches. `read(path) -> text | None` is the engine's guarded
    reader (regular files inside the read roots, size-capped); every path asked for is recorded as a dependency."""

    def __init__(self, read, is_file):
        self._read = read
        self._is_file = is_file
        self._indexes: dict = {}  # path -> (text, _FileIndex | None), refreshed by `read` per link
        self._resolved: dict = {}  # (importer, module, level) -> (when, the file found, the candidates looked at)

    # ---- files ----------------------------------------------------------------------------------------------
    def _index(self, path: Path, program: LinkedProgram) -> _FileIndex | None:
        key = str(path)
        program.files.add(key)
        text = self._read(path)
        if text is None:
            return None
        program.read_texts[key] = hash(text)
        cached = self._indexes.get(key)
        if cached is None or cached[0] is not text and cached[0] != text:
            if len(self._indexes) > 512:
                self._indexes.pop(next(iter(self._indexes)))
            cached = self._indexes[key] = (text, index_text(key, text))
        return cached[1]

    def module_file(self, importer: Path, module: str, level: int, program: LinkedProgram,
                    extra: tuple = ()) -> Path | None:
        """The project file of `module` imported from `importer` (a `.py` file or a package's `__init__.py`);
        `extra`: folders the importer adds to `sys.path` (relative to its own folder). Looked up again after
        `RESOLUTION_TTL` seconds (a file created since is found)."""
        parts = [p for p in module.split(".") if p]
        if not level and parts and parts[0] in LIBRARY_ROOTS:
            return None
        key = (str(importer), module, level, extra)
        now = time.monotonic()
        cached = self._resolved.get(key)
        if cached is None or now - cached[0] > RESOLUTION_TTL:
            candidates, found = [], None
            for candidate in self._candidates(importer, parts, level, extra):
                candidates.append(str(candidate))
                if candidate != importer and self._is_file(candidate):
                    found = candidate
                    break
            if len(self._resolved) > 8192:
                self._resolved.pop(next(iter(self._resolved)))
            cached = self._resolved[key] = (now, found, candidates)
        program.files.update(cached[2])
        return cached[1]

    @staticmethod
    def _candidates(importer: Path, parts: list, level: int, extra: tuple = ()):
        folder = importer.parent
        if level:
            base = folder
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            bases = []
            for base in [folder, *folder.parents][:MAX_PARENTS]:
                bases.append(base)
                bases.append(base / "src")
                if any((base / marker).exists() for marker in ROOT_MARKERS):
                    break
            root = project_root(importer)
            for added in reversed(extra):  # a folder outside the project (`sys.path.insert(0, "/opt")`) is not read
                base = Path(os.path.normpath(folder / added))
                if base == root or root in base.parents:
                    bases.insert(0, base)
        for base in bases:
            if not parts:
                yield base / "__init__.py"
                continue
            rel = Path(*parts)
            yield base / rel.with_suffix(".py")
            yield base / rel / "__init__.py"

    # ---- linking --------------------------------------------------------------------------------------------
    def link(self, entry_path: str, entry_text: str, entry_index: _FileIndex | None) -> LinkedProgram | None:
        """The definitions `entry_path` reaches in its project, or None when it imports none."""
        if entry_index is None or entry_path.startswith("<"):
            return None
        entry = Path(entry_path)
        program = LinkedProgram(entry_path, entry_text.count("\n") + (0 if entry_text.endswith("\n") else 1))
        state = _LinkState(entry_index)
        removed, aliases, qualnames = set(), {}, {}
        extra = entry_index.search_paths
        for start, _end, records in entry_index.imports:
            for record in records:
                target = self.module_file(entry, record.module, record.level, program, extra)
                if target is None:
                    continue
                if record.star:
                    for name in self._public_names(target, program):
                        if name in _words(entry_text) and self._link_one(target, name, state, program, name, start):
                            removed.add(name)
                    continue
                if record.name is not None:
                    found = self._link_one(target, record.name, state, program, record.local, start)
                    if found is not None:
                        removed.add(record.local)
                        if record.local != found:
                            aliases[record.local] = found
                        continue
                    # `from pkg import losses`: a submodule, used as `losses.nt_xent(...)`
                    dotted = f"{record.module}.{record.name}" if record.module else record.name
                    target = self.module_file(entry, dotted, record.level, program, extra)
                    if target is None:
                        continue
                for attr in _attributes_used(entry_text, record.local):
                    found = self._link_one(target, attr, state, program, "", start)
                    if found == attr:
                        qualnames[f"{_qualified(record)}.{attr}"] = found
        if not state.chunks and not program.budget_notes:
            return None
        program.chunks = state.ordered_chunks()
        program.linked = LinkedNames(frozenset(removed), aliases, qualnames)
        return program

    def _link_one(self, path: Path, name: str, state: "_LinkState", program: LinkedProgram,
                  local: str = "", line: int = 0) -> str | None:
        """Link `name` as `path` defines it, if its names clash with nothing linked so far; its definition's name.
        `local`: the entry's name for it (`from losses import nt_xent`), which the definition replaces."""
        plan = state.plan()
        plan.root = local
        found = self._resolve(path, name, plan, program, 0)
        if found is None:
            return None
        if not state.commit(plan, program):
            if state.refused == "budget":  # said to the user: the analysis stops short here, never a silent pass
                program.budget_notes.append((line, f"`{name}` from {path.name} is not followed: the project's "
                                                   f"linked code is over its budget ({MAX_LINKED_FILES} files, "
                                                   f"{MAX_LINKED_LINES:,} lines)"))
            else:
                program.notes.append(f"`{name}` from {path.name} not followed: a name it needs means something else "
                                     "here")
            return None
        return found

    def _public_names(self, path: Path, program: LinkedProgram) -> list:
        index = self._index(path, program)
        return [] if index is None else [n for n in index.definitions if not n.startswith("_")]

    def _resolve(self, path: Path, name: str, plan: "_Plan", program: LinkedProgram, depth: int) -> str | None:
        """Plan the linking of `name` as `path` defines it (following re-exports); the definition's name."""
        if depth > MAX_DEPTH:
            return None
        index = self._index(path, program)
        if index is None:
            return None
        if name in index.definitions:
            plan.want(index, name)
            return name if self._close(index, name, plan, program, depth) else None
        if name in index.assigned and len(index.assigned[name]) == 1 and name not in _reexported(index, name):
            # a module-level constant or config (`SMALL = dict(dim=8, ...)`), bound once in its file
            plan.want_assignment(index, name)
            return name if self._close(index, name, plan, program, depth) else None
        for _start, _end, records in index.imports:  # a re-export: `from .nets import Gen` in a package __init__
            for record in records:
                if record.local == name and record.name is not None:
                    target = self.module_file(path, record.module, record.level, program)
                    if target is not None:
                        found = self._resolve(target, record.name, plan, program, depth + 1)
                        if found is not None and found != name:
                            return None  # re-exported under another name: not linked (one name per definition)
                        return found
        return None

    def _close(self, index: _FileIndex, name: str, plan: "_Plan", program: LinkedProgram, depth: int) -> bool:
        """Plan what the definition reads in its own file: helpers, constants, library imports and names from
        other project files. A name it reads that cannot be linked must stay unbound in the joined program."""
        pending = [name]
        seen = {name}
        while pending:
            current = pending.pop()
            if current in index.definitions:
                spans = [index.definitions[current]]
            else:
                spans = index.assigned.get(current, [])
            free = index.free.get(current)
            if free is None:
                free = set()
                for start, end in spans:
                    names = _free_globals("\n".join(index.lines[start:end]) + "\n")
                    if names is None:
                        free = None
                        break
                    free |= names
                index.free[current] = free
            if free is None:
                return False
            for word in free - seen:
                seen.add(word)
                if word in index.definitions or word in index.assigned:
                    if word in index.definitions:
                        plan.want(index, word)
                    else:
                        plan.want_assignment(index, word)
                    pending.append(word)
                    continue
                record = _import_of(index, word)
                if record is None:
                    if word in index.all_names or word not in _BUILTINS:
                        plan.unbound.add(word)  # bound some other way there (or nowhere): no other file may bind it
                    continue
                target = self.module_file(Path(index.path), record.module, record.level, program)
                if target is None:
                    if record.level:
                        plan.unbound.add(word)  # a relative import of a file we cannot read
                    else:
                        plan.library_import(index, record)
                    continue
                found = self._resolve(target, record.name, plan, program, depth + 1) if record.name else None
                if found != word:
                    plan.unbound.add(word)  # a project module alias, or a name linked under another name
        return True


def _reexported(index: _FileIndex, name: str) -> set:
    """{name} when the file also imports `name` (an import and an assignment of one name: not linked)."""
    return {name} if _import_of(index, name) is not None else set()


def _import_of(index: _FileIndex, name: str):
    for _start, _end, records in index.imports:
        for record in records:
            if record.local == name and not record.star:
                return record
    return None


_BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__class__"}


def _free_globals(text: str) -> set | None:
    """The global names a chunk of top-level code reads (Python's own scoping, through `symtable`)."""
    try:
        table = symtable.symtable(text, "<linked>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out, stack = set(), [table]
    while stack:
        current = stack.pop()
        module = current.get_type() == "module"
        for symbol in current.get_symbols():
            if symbol.is_referenced() and (module or symbol.is_global()):
                out.add(symbol.get_name())
        stack.extend(current.get_children())
    return out


def _qualified(record: _Import) -> str:
    """The dotted name `names.collect_imports` gives the import's local name (what `resolve_dotted` returns)."""
    if record.name is None:
        return record.module
    module = "." * record.level + record.module
    return f"{module}{'' if module.endswith('.') else '.'}{record.name}"


def _meaning(record: _Import) -> str:
    """What an import binds its local name to (`from torch.nn import functional as F` = `import
    torch.nn.functional as F`)."""
    return _qualified(record) if record.level == 0 else f"{record.level}:{_qualified(record)}"


def _attributes_used(text: str, local: str) -> list:
    return sorted(set(re.findall(r"(?<![\w.])" + re.escape(local) + r"\s*\.\s*([A-Za-z_]\w*)", text)))


class _Plan:
    """One import's linking, checked for clashes before it is committed."""

    def __init__(self):
        self.definitions: dict = {}  # (path, name) -> (index, name)
        self.assignments: dict = {}  # (path, name) -> index
        self.imports: dict = {}  # (path, start line) -> (index, record)
        self.unbound: set = set()  # names linked code reads that no other file may bind
        self.root = ""  # the entry's import being linked (its local name), which the definition replaces

    def want(self, index, name):
        self.definitions[(index.path, name)] = (index, name)

    def want_assignment(self, index, name):
        self.assignments[(index.path, name)] = index

    def library_import(self, index, record):
        for start, end, records in index.imports:
            if record in records:
                self.imports[(index.path, start)] = (index, start, end, records)


class _LinkState:
    """The definitions committed so far and the names they bind."""

    def __init__(self, entry: _FileIndex):
        self.owner: dict = {name: "<entry>" for name in entry.all_names}  # name -> the file binding it
        self.library: dict = {}  # local alias -> module (library imports of entry and linked files)
        for _start, _end, records in entry.imports:
            for record in records:
                if not record.star:
                    self.library[record.local] = _meaning(record)
                    self.owner[record.local] = "<import>"  # replaced only by the definition it imports
        self.chunks: dict = {}  # (path, start line) -> Chunk
        self.linked: set = set()  # (path, name)
        self.lines = 0
        self.refused = ""  # why the last commit refused: "clash" or "budget"

    def plan(self) -> _Plan:
        return _Plan()

    def commit(self, plan: _Plan, program: LinkedProgram) -> bool:
        self.refused = "clash"
        names = {}
        for (path, name) in list(plan.definitions) + list(plan.assignments):
            if (path, name) in self.linked:
                continue
            owner = self.owner.get(name)
            if owner == "<import>" and name == plan.root:
                pass
            elif owner is not None and owner != path or names.get(name, path) != path:
                return False
            names[name] = path
        for _key, (index, _start, _end, records) in plan.imports.items():
            for record in records:
                if record.star:
                    continue
                meaning = _meaning(record)
                known = self.library.get(record.local)
                if known != meaning and (known is not None or record.local in self.owner):
                    return False
        if any(name in self.owner or name in self.library or name in names for name in plan.unbound):
            return False
        new_files = {path for path, _ in list(plan.definitions) + list(plan.assignments)} - \
            {path for path, _ in self.linked}
        if len({p for p, _ in self.linked} | new_files) > MAX_LINKED_FILES:
            self.refused = "budget"
            return False
        added = []
        for (path, name), (index, _) in plan.definitions.items():
            start, end = index.definitions[name]
            added.append((path, start, end, index))
        for (path, name), index in plan.assignments.items():
            for start, end in index.assigned[name]:
                added.append((path, start, end, index))
        for (path, _), (index, start, end, _records) in plan.imports.items():
            added.append((path, start, end, index))
        extra = sum(end - start for _p, start, end, _i in added if (_p, start) not in self.chunks)
        if self.lines + extra > MAX_LINKED_LINES:
            self.refused = "budget"
            return False
        for name, path in names.items():
            self.owner[name] = path
        for (path, name) in list(plan.definitions) + list(plan.assignments):
            self.linked.add((path, name))
        for _key, (index, _start, _end, records) in plan.imports.items():
            for record in records:
                if not record.star:
                    self.library[record.local] = _meaning(record)
                    self.owner.setdefault(record.local, "<library>")
        for name in plan.unbound:
            self.owner.setdefault(name, "<unbound>")
        for path, start, end, index in added:
            if (path, start) not in self.chunks:
                text = "\n".join(index.lines[start:end]) + "\n"
                self.chunks[(path, start)] = Chunk(path, start, text)
                self.lines += end - start
        return True

    def ordered_chunks(self) -> list:
        """Library imports first, then each file's statements in file order (a constant before its reader)."""
        chunks = sorted(self.chunks.values(), key=lambda c: (c.path, c.start_line))
        return chunks


_RELABEL_SPAN = re.compile(r"\b(?P<word>[Ll]ine)s (?P<a>\d+)-(?P<b>\d+)\b")
_RELABEL_ONE = re.compile(r"\b(?P<word>[Ll]ine) (?P<a>\d+)\b(?! of )")
_RELABEL_ZH = re.compile(r"第 ?(?P<a>\d+) ?行")


def relabel(message: str, program: LinkedProgram, own_path: str, lang: str) -> str:
    """A message whose line numbers count the joined program, said as users count them: a line of the file the
    finding is in stays `line N`; a line of another file becomes `line N of losses.py`. Code spans are left
    alone."""
    if "ine" not in message and "行" not in message:
        return message

    def where(line: int) -> tuple[str, int]:
        path, local = program.locate(line - 1)
        return path, local + 1

    def name(path: str) -> str:
        return _display_name(path, own_path)

    def one(m: re.Match) -> str:
        path, line = where(int(m.group("a")))
        return f"{m.group('word')} {line}" if path == own_path else f"{m.group('word')} {line} of {name(path)}"

    def span(m: re.Match) -> str:
        (p1, l1), (p2, l2) = where(int(m.group("a"))), where(int(m.group("b")))
        if p1 == p2:
            return f"{m.group('word')}s {l1}-{l2}" + ("" if p1 == own_path else f" of {name(p1)}")
        return m.group(0)

    def zh(m: re.Match) -> str:
        path, line = where(int(m.group("a")))
        return f"第 {line} 行" if path == own_path else f"{name(path)} 第 {line} 行"

    parts = message.split("`")
    for i in range(0, len(parts), 2):
        text = _RELABEL_SPAN.sub(span, parts[i])
        text = _RELABEL_ONE.sub(one, text)
        if "行" in text:
            text = _RELABEL_ZH.sub(zh, text)
        parts[i] = text
    return "`".join(parts)


def _display_name(path: str, own_path: str) -> str:
    """`losses.py`, or `models/net.py` relative to the finding's folder when the names alone are ambiguous."""
    target, own = Path(path), Path(own_path)
    try:
        rel = target.resolve().relative_to(own.resolve().parent)
        return rel.as_posix()
    except (ValueError, OSError):
        return target.name


_DEF_NAME = re.compile(r"(?:[ \t]*(?:@[^\n]*|#[^\n]*|)\n)*[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")


_IMPORTED_ROOTS = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)([\w]*)|import[ \t]+([\w]+(?:[ \t]*\.[ \t]*\w+)*(?:[ \t]+as[ \t]+\w+)?"
                             r"(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*))", re.M)


def may_import_project(text: str) -> bool:
    """Whether the text imports anything but known libraries (a relative import, or a module whose top package is
    not in LIBRARY_ROOTS): most single-file scripts do not, and are not linked at all."""
    for m in _IMPORTED_ROOTS.finditer(text):
        dots, from_root, names = m.groups()
        if dots:
            return True
        if from_root is not None:
            if from_root not in LIBRARY_ROOTS:
                return True
            continue
        for part in (names or "").split(","):
            root = part.strip().split(".")[0].split()[0] if part.strip() else ""
            if root and root not in LIBRARY_ROOTS:
                return True
    return False


def index_blocks(path: str, blocks, parsed: dict) -> _FileIndex:
    """The entry's index from its blocks, each statement group parsed alone (`parsed`: text -> index, kept by the
    caller across edits), so that half-typed code elsewhere in the file keeps its imports linked."""
    definitions, imports, all_names, runs_code, search_paths = {}, [], set(), False, []
    for block in blocks:
        if block.is_definition:
            head = _DEF_NAME.match(block.text)
            if head is not None:
                definitions.setdefault(head.group(1), (block.start_line, block.end_line))
                all_names.add(head.group(1))
                runs_code = runs_code or (head.group(1).startswith("test_") and "class" not in head.group(0))
            continue
        own = parsed.get(block.text)
        if own is None:
            own = index_text(path, block.text) or _FileIndex(path, [], {}, {}, [], set())
            if len(parsed) > 4096:
                parsed.pop(next(iter(parsed)))
            parsed[block.text] = own
        imports.extend((s + block.start_line, e + block.start_line, r) for s, e, r in own.imports)
        all_names |= own.all_names
        runs_code = runs_code or own.runs_code
        search_paths.extend(own.search_paths)
        for name in own.definitions:
            all_names.add(name)
    for _s, _e, records in imports:
        all_names.update(r.local for r in records if not r.star)
    return _FileIndex(path, [], definitions, {}, imports, all_names, runs_code, search_paths=tuple(search_paths))


_TOP_IMPORT = re.compile(r"^(?:from[ \t]+[.\w]+[ \t]+import[ \t]+(?:\([^)]*\)|[^\n]*)|import[ \t]+[^\n]*)", re.M)
_SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages", "dist", "build"}
MAX_INDEXED_FILES = 5_000


def project_root(path: Path, exists=lambda p: p.exists()) -> Path:
    """The folder holding a project marker (pyproject.toml, .git, setup.py, setup.cfg) at most MAX_PARENTS up
    from `path`; else `path`'s own folder."""
    folder = path.parent
    for base in [folder, *folder.parents][:MAX_PARENTS]:
        if any(exists(base / marker) for marker in ROOT_MARKERS):
            return base
    return folder


class ProjectIndex:
    """Who imports whom in a project, from each file's top-level import lines (read, never run): which files a
    module's findings may come from (`losses.py` is checked through the scripts that import it)."""

    def __init__(self, linker: ProjectLinker, read, listing_ttl: float = 2.0):
        self._linker = linker
        self._read = read  # path -> text | None (guarded)
        self._records: dict = {}  # path -> (text, [import records])
        self._listing: dict = {}  # root -> (time, [paths])
        self._ttl = listing_ttl

    def files(self, root: Path) -> list:
        """The project's `.py` files: no hidden or vendored folders, no virtual environments, no symlinked
        folders, at most MAX_INDEXED_FILES."""
        import os
        import time

        now = time.monotonic()
        cached = self._listing.get(str(root))
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        out = []
        for folder, dirs, names in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_FOLDERS
                             and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg")))
            out.extend(Path(folder) / n for n in sorted(names) if n.endswith(".py"))
            if len(out) >= MAX_INDEXED_FILES:
                break
        out = out[:MAX_INDEXED_FILES]
        if len(self._listing) > 16:
            self._listing.pop(next(iter(self._listing)))
        self._listing[str(root)] = (now, out)
        return out

    def _imports_of(self, path: Path) -> list:
        text = self._read(path)
        if text is None:
            return []
        key = str(path)
        cached = self._records.get(key)
        if cached is None or cached[0] != text:
            records = []
            for m in _TOP_IMPORT.finditer(text):
                try:
                    records.extend(import_records(ast.parse(m.group(0))))
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue
            if len(self._records) > 2 * MAX_INDEXED_FILES:
                self._records.pop(next(iter(self._records)))
            cached = self._records[key] = (text, records)
        return cached[1]

    def importers_of(self, path: str, limit: int = 32, depth: int = 4) -> list:
        """The project files that import `path`, directly or through other project modules (a package's
        `__init__` re-exporting it), nearest first; at most `limit`."""
        import os

        target = Path(path)
        root = project_root(target)
        files = self.files(root)
        scratch = LinkedProgram(path, 0)
        imported_by: dict = {}
        for other in files:
            for record in self._imports_of(other):
                found = self._linker.module_file(other, record.module, record.level, scratch)
                if found is None and record.name is not None and not record.star:
                    dotted = f"{record.module}.{record.name}" if record.module else record.name
                    found = self._linker.module_file(other, dotted, record.level, scratch)
                if found is not None:
                    imported_by.setdefault(os.path.realpath(found), set()).add(str(other))
        out, seen = [], {os.path.realpath(path)}
        frontier = [os.path.realpath(path)]
        for _ in range(depth):
            nxt = []
            for real in frontier:
                for other in sorted(imported_by.get(real, ())):
                    real_other = os.path.realpath(other)
                    if real_other not in seen:
                        seen.add(real_other)
                        out.append(other)
                        nxt.append(real_other)
            frontier = nxt
        return out[:limit]
