"""Which files `gradguard check PATH...` checks: Python files and notebooks under the paths, minus .gitignore'd,
default-excluded and `exclude`d ones. Inside folders only regular files are taken (symlinked folders are not
entered); a symlinked file is read, but --fix writes only files inside the checked folders (fileio.Roots)."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from .config import DEFAULT_EXCLUDES, Config, ConfigResolver, IgnorePatterns
from .fileio import SourceError, clean_stale_tmp_at, is_regular, read_regular

PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"


def _gitignore_patterns(folder: Path) -> IgnorePatterns:
    path = folder / ".gitignore"
    if not is_regular(str(path)):  # a symlink to /dev/zero or a FIFO is never read
        return IgnorePatterns(())
    try:
        lines = read_regular(str(path), 1024 * 1024).decode("utf-8", errors="replace").splitlines()
    except SourceError:
        return IgnorePatterns(())
    return IgnorePatterns(line.strip() for line in lines
                          if line.strip() and not line.startswith("#") and not line.startswith("!"))


def _ignored(rel: str, name: str, patterns: tuple[IgnorePatterns, ...]) -> bool:
    return any(p.matches(rel, name) for p in patterns)


def config_excludes(path: Path, config: Config) -> bool:
    """Whether `exclude` of the file's own config matches it (patterns are relative to that config's folder)."""
    if not config.exclude:
        return False
    rel = path.as_posix()
    if config.root:
        try:
            rel = Path(os.path.abspath(path)).relative_to(Path(config.root).resolve()).as_posix()
        except ValueError:
            pass
    parts = rel.split("/")
    exclude = config.exclude_patterns()
    return any(exclude.matches("/".join(parts[: i + 1]), parts[i]) for i in range(len(parts)))


def is_checked_name(name: str, notebooks: bool = True) -> bool:
    return name.endswith(PYTHON_SUFFIXES) or (notebooks and name.endswith(NOTEBOOK_SUFFIX))


def discover(paths: list[str], resolver: ConfigResolver, default_excludes: bool = True,
             force_exclude: bool = False) -> list[Path]:
    """Python files and notebooks under `paths`, in a stable order.

    Explicit files are always included (unless `force_exclude` and their config excludes them); missing
    paths are included too and reported as unreadable. Inside folders only regular files are taken.
    """
    found: list[Path] = []
    names = set(DEFAULT_EXCLUDES) if default_excludes else set()
    for raw in paths:
        root = Path(raw)
        if not root.is_dir():
            if force_exclude and root.exists():
                # Default-excluded folder names count from the working directory down (pre-commit runs at
                # the repository root), never in the folders above it.
                rel = os.path.relpath(os.path.abspath(root))
                parts = Path(rel if not rel.startswith("..") else raw).parts[:-1]
                if config_excludes(root, resolver.for_path(root)) or any(p in names for p in parts):
                    continue
            found.append(root)
            continue
        if force_exclude and config_excludes(root, resolver.for_path(root)) and raw not in (".", "./"):
            continue
        patterns = _gitignore_patterns(root) if default_excludes else IgnorePatterns(())
        for folder, dirs, files in os.walk(root):
            folder_path = Path(folder)
            rel_folder = os.path.relpath(folder, root)
            local = (patterns,)
            if default_excludes and folder_path != root:
                local += (_gitignore_patterns(folder_path),)
            config = resolver.for_path(folder_path)

            def keep(d: str) -> bool:
                if d == ".git" or (default_excludes and (d in names or d.startswith("."))):
                    return False
                if _ignored(os.path.normpath(os.path.join(rel_folder, d)), d, local):
                    return False
                return not config_excludes(folder_path / d, resolver.for_path(folder_path / d))

            dirs[:] = sorted(d for d in dirs if keep(d))
            clean_stale_tmp_at(folder_path, files)  # a killed --fix's temporary files (fileio.clean_stale_tmp)
            for f in sorted(files):
                if not is_checked_name(f):
                    continue
                path = folder_path / f
                if _ignored(os.path.normpath(os.path.join(rel_folder, f)), f, local) or config_excludes(path, config):
                    continue
                try:
                    if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO, or a symlink to a device or /proc
                        continue
                except OSError:
                    pass  # a dangling or looping link: reported as unreadable
                found.append(path)
    return _without_aliases(found)


def _without_aliases(found: list[Path]) -> list[Path]:
    """Drop a symlink to a file that is found under its own name too (`link.py -> src/real.py`): one report, and
    --fix writes the file once."""
    links = {p for p in found if os.path.islink(p)}
    if not links:
        return found
    real = {os.path.realpath(p) for p in found if p not in links}
    return [p for p in found if p not in links or os.path.realpath(p) not in real]
