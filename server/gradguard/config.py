"""`[tool.gradguard]` in the nearest pyproject.toml, merged with command-line or editor settings."""
from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_EXCLUDES = (".git", ".venv", "venv", "site-packages", "node_modules", "__pycache__", ".tox", ".nox",
                    "build", "dist", ".eggs", ".mypy_cache", ".corpus")
LANGUAGES = ("en", "zh")


class ConfigError(ValueError):
    """A configuration value that is not valid; the message says which and why."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("GG",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: dict = field(default_factory=dict)  # glob -> codes
    exclude: tuple[str, ...] = ()
    language: str = ""
    root: str = ""  # folder of the pyproject.toml it came from

    def is_enabled(self, code: str, path: str = "") -> bool:
        selected = any(code.startswith(p) for p in self.select + self.extend_select)
        if not selected or any(code.startswith(p) for p in self.ignore):
            return False
        if path and self.per_file_ignores:
            return not any(code.startswith(c) for c in self._ignored_for(path))
        return True

    def _ignored_for(self, path: str) -> tuple[str, ...]:
        """The code prefixes `per-file-ignores` turns off for `path`, matched once per path (each pattern is
        compiled once per config, and exact names are a dict lookup), so 60,000 patterns cost one pass."""
        memo = self.__dict__.get("_per_file_memo")
        if memo is None:
            memo = {}
            object.__setattr__(self, "_per_file_memo", memo)
            object.__setattr__(self, "_per_file_matcher", _PatternMatcher(self.per_file_ignores))
        codes = memo.get(path)
        if codes is None:
            rel = _relative(path, self.root)
            codes = memo[path] = self.__dict__["_per_file_matcher"].codes(rel, Path(rel).name)
        return codes

    def exclude_patterns(self) -> "IgnorePatterns":
        """`exclude`, compiled once per config."""
        patterns = self.__dict__.get("_exclude_patterns")
        if patterns is None:
            patterns = IgnorePatterns(self.exclude)
            object.__setattr__(self, "_exclude_patterns", patterns)
        return patterns

    def merged(self, overrides: dict, where: str = "settings") -> "Config":
        """This config with settings from the command line or the editor laid over it."""
        values = _validate({k: v for k, v in overrides.items() if v not in (None, "", [], ())}, where)
        return replace(self, **values)


class _PatternMatcher:
    """fnmatch over many patterns at once: patterns without wildcards are looked up, the rest compiled once."""

    def __init__(self, patterns: dict):
        self.exact: dict[str, list[tuple[str, ...]]] = {}
        self.globs: list[tuple[re.Pattern, tuple[str, ...]]] = []
        for pattern, codes in patterns.items():
            if any(ch in pattern for ch in "*?["):
                self.globs.append((re.compile(fnmatch.translate(os.path.normcase(pattern))), tuple(codes)))
            else:
                self.exact.setdefault(os.path.normcase(pattern), []).append(tuple(codes))

    def codes(self, rel: str, name: str) -> tuple[str, ...]:
        rel, name = os.path.normcase(rel), os.path.normcase(name)
        out: list[str] = []
        for key in {rel, name}:
            for codes in self.exact.get(key, ()):
                out.extend(codes)
        for regex, codes in self.globs:
            if regex.match(rel) or regex.match(name):
                out.extend(codes)
        return tuple(dict.fromkeys(out))


class IgnorePatterns:
    """gitignore-style patterns (a `.gitignore`'s lines, `exclude`), compiled once, matched against a path relative
    to their folder (`rel`) and its last part (`name`).

    A pattern `/p` matches `rel`; any other matches `name`, `rel`, or the end of `rel` after a slash (fnmatch's
    rules: `*` crosses slashes; a trailing slash is dropped). Literal patterns (most of a long `.gitignore`) are set
    lookups; patterns with wildcards are joined into one regular expression per way of matching, and only the
    first MAX_GLOBS of them count, so a path costs the same whatever a file in a pull request holds (fnmatch three
    times per pattern per path, beyond its cache of compiled patterns, took hours for a 760 KB `.gitignore`).
    """

    MAX_GLOBS = 1_000

    def __init__(self, patterns) -> None:
        self.literals: set[str] = set()  # unanchored: a name, or `rel`, or the end of `rel` after a slash
        self.anchored: set[str] = set()  # `/p`: `rel` itself
        globs: list[str] = []
        anchored_globs: list[str] = []
        for pattern in patterns:
            p = os.path.normcase(pattern.rstrip("/"))
            anchored = p.startswith("/")
            if anchored:
                p = p[1:]
            if any(ch in p for ch in "*?["):
                (anchored_globs if anchored else globs).append(p)
            else:
                (self.anchored if anchored else self.literals).add(p)
        self.dropped = max(0, len(globs) + len(anchored_globs) - self.MAX_GLOBS)
        anchored_globs = anchored_globs[: self.MAX_GLOBS]
        globs = globs[: self.MAX_GLOBS - len(anchored_globs)]
        self._glob = _alternatives(globs)
        self._glob_after_slash = _alternatives(["*" + os.sep + p for p in globs])  # normcase made "/" os.sep
        self._anchored_glob = _alternatives(anchored_globs)

    def matches(self, rel: str, name: str) -> bool:
        rel, name = os.path.normcase(rel), os.path.normcase(name)
        if rel in self.anchored or name in self.literals or rel in self.literals:
            return True
        slash = rel.find(os.sep)
        while slash != -1:
            if rel[slash + 1:] in self.literals:
                return True
            slash = rel.find(os.sep, slash + 1)
        return bool(
            (self._anchored_glob and self._anchored_glob.match(rel))
            or (self._glob and (self._glob.match(name) or self._glob.match(rel) or self._glob_after_slash.match(rel)))
        )


def _alternatives(globs: list[str]) -> re.Pattern | None:
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in globs)) if globs else None


def _relative(path: str, root: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve())) if root else path
    except ValueError:
        return path


def _codes(value, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of rule codes like [\"GG101\"], "
                          f"got {value!r}")
    for v in value:
        if not v.upper().startswith("GG"):
            if where.startswith("--"):  # a command-line flag: name it as typed, no table or key
                raise ConfigError(f"{where} {v}: not a gradguard code (they start with GG, e.g. GG101)")
            raise ConfigError(f"{where}: `{key}` has {v!r}, which is not a gradguard code "
                              "(they start with GG)")
    return tuple(v.upper() for v in value)


_KEYS = {"select", "ignore", "extend_select", "per_file_ignores", "exclude", "language"}
# How the README spells them (a TOML key may be written either way).
_DOCUMENTED = ", ".join(sorted(k.replace("_", "-") for k in _KEYS))


def check_flags(overrides: dict) -> None:
    """Command-line overrides, checked with each value's flag named (`--select XYZ: ...`)."""
    for key, value in overrides.items():
        if value not in (None, "", [], ()):
            _validate({key: value}, "--" + key.replace("_", "-"))


def _validate(raw: dict, where: str) -> dict:
    values = {}
    for written, value in raw.items():
        key = written.replace("-", "_")
        if key not in _KEYS:
            raise ConfigError(f"{where}: unknown key `{written}` (known: {_DOCUMENTED})")
        if key in ("select", "ignore", "extend_select"):
            values[key] = _codes(value, key.replace("_", "-"), where)
        elif key == "per_file_ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
            values[key] = {str(k): _codes(v, f"per-file-ignores.{k}", where) for k, v in value.items()}
        elif key == "exclude":
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: `exclude` must be a list of glob patterns")
            values[key] = tuple(value)
        elif key == "language":
            if value not in LANGUAGES + ("auto",):
                raise ConfigError(f"{where}: `language` must be one of en, zh, auto; got {value!r}")
            values[key] = "" if value == "auto" else value
    return values


def find_pyproject(start: str | Path) -> Path | None:
    """The nearest pyproject.toml above `start` that has a `[tool.gradguard]` table, else the nearest one."""
    path = Path(start).resolve()
    folder = path if path.is_dir() else path.parent
    nearest = None
    for candidate in [folder, *folder.parents]:
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            nearest = nearest or pyproject
            if _has_section(pyproject):
                return pyproject
    return nearest


def _has_section(pyproject: Path) -> bool:
    try:
        data = pyproject.read_bytes()
    except OSError:
        return False
    if b"gradguard" not in data:  # cheap pre-test
        return False
    try:
        return "gradguard" in _tool_table(pyproject)
    except ConfigError:
        return True  # it mentions gradguard but cannot be read: report that instead of skipping it


def load_config(start: str | Path) -> Config:
    """The `[tool.gradguard]` config for a file or folder (defaults when there is none)."""
    pyproject = find_pyproject(start)
    if pyproject is None:
        return Config()
    return config_from_pyproject(pyproject)


def _tool_table(pyproject: Path) -> dict:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc}") from exc
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{pyproject}: `tool` must be a table, got {type(tool).__name__}")
    return tool


def config_from_pyproject(pyproject: Path) -> Config:
    section = _tool_table(Path(pyproject)).get("gradguard")
    if section is None:
        return Config(root=str(Path(pyproject).parent))
    if not isinstance(section, dict):
        raise ConfigError(f"{pyproject}: [tool.gradguard] must be a table")
    try:
        values = _validate(section, f"{pyproject} [tool.gradguard]")
    except ConfigError:
        raise
    except Exception as exc:  # an odd value the checks above did not foresee: still a configuration error
        raise ConfigError(f"{pyproject} [tool.gradguard]: cannot use this table ({type(exc).__name__}: {exc})") from exc
    return replace(Config(root=str(Path(pyproject).parent)), **values)


class ConfigResolver:
    """The effective config of each checked file: the nearest pyproject.toml with `[tool.gradguard]` above it
    (so argument order never matters), or one `--config` file, or none (`--isolated`); command-line
    overrides are laid over it. Cached per folder."""

    def __init__(self, overrides: dict | None = None, config_file: str | None = None, isolated: bool = False):
        self.overrides = {k: v for k, v in (overrides or {}).items() if v not in (None, "", [], ())}
        self.isolated = isolated
        self._fixed: Config | None = None
        self._by_folder: dict[Path, Config] = {}
        self._by_file: dict[Path, Config] = {}
        if isolated:
            self._fixed = self._finish(Config())
        elif config_file:
            path = Path(config_file)
            if path.is_dir():
                path = path / "pyproject.toml"
            if not path.is_file():
                raise ConfigError(f"{config_file}: no such configuration file")
            self._fixed = self._finish(config_from_pyproject(path))

    def _finish(self, config: Config) -> Config:
        return config.merged(self.overrides) if self.overrides else config

    def for_path(self, path: str | Path) -> Config:
        if self._fixed is not None:
            return self._fixed
        target = Path(os.path.abspath(path))
        folder = target if target.is_dir() else target.parent
        cached = self._by_folder.get(folder)
        if cached is None:
            cached = self._search(folder)
            self._by_folder[folder] = cached
        return cached

    def _search(self, folder: Path) -> Config:
        chain = []
        found = None
        for candidate in [folder, *folder.parents]:
            if candidate in self._by_folder:
                found = self._by_folder[candidate]
                break
            chain.append(candidate)
            pyproject = candidate / "pyproject.toml"
            if pyproject.is_file() and _has_section(pyproject):
                found = self._finish(config_from_pyproject(pyproject))
                break
        if found is None:
            found = self._finish(Config())
        for c in chain:
            self._by_folder[c] = found
        return found
