"""Every read and write of checked files, the cache and the fixer: regular files only, inside the allowed roots.

A checked repository is untrusted input. Nothing in it may make gradguard read a device or a FIFO, read without
bound, or write anywhere but the files it checks and its own cache folder. So:
- reads take regular files only (devices, FIFOs, /proc links are refused unread) and stop at a size cap;
- writes go to a temporary sibling created with O_EXCL|O_NOFOLLOW in a directory opened by file descriptor, then
  renamed over the target inside that directory, so a symlink swapped in meanwhile is replaced, never followed;
- a target whose real path lies outside the allowed roots (a committed symlink to ~/.bashrc) is refused;
- a temporary file left by a killed run (`.<name>.<random>.gradguard-tmp`) is removed by the next run that sees
  it: the writer holds a lock on it, so a temporary file whose lock can be taken has no writer left.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import secrets
import stat
from pathlib import Path

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
TMP_SUFFIX = ".gradguard-tmp"
NAME_MAX = 255  # bytes of one file name: ext4, XFS, btrfs, APFS (in UTF-8), NTFS (in UTF-16 units)
_TMP_NAME = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8,}" + re.escape(TMP_SUFFIX) + r"$")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class SourceError(ValueError):
    """A file that cannot be read as Python source; the message says why ("...; not analysed")."""


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


# ---------------------------------------------------------------- roots
class Roots:
    """The folders gradguard may write in: the checked folders, and for a file named on the command line the
    working directory when the file is under it (pre-commit passes files by name from the repository root),
    else the file's own folder. Held as real paths; a path is inside when its real path is."""

    def __init__(self, folders):
        self.folders = tuple(dict.fromkeys(os.path.realpath(f) for f in folders))

    @classmethod
    def for_arguments(cls, paths: list[str]) -> "Roots":
        cwd = os.path.abspath(os.getcwd())
        folders = []
        for raw in paths:
            absolute = os.path.abspath(raw)
            if os.path.isdir(absolute):
                folders.append(absolute)
            elif _under(absolute, cwd):
                folders.append(cwd)
            else:
                folders.append(os.path.dirname(absolute))
        return cls(folders)

    def contains(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(_under(real, root) for root in self.folders)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# ---------------------------------------------------------------- reading
def read_regular(path: str, max_bytes: int, roots: Roots | None = None) -> bytes:
    """A regular file's bytes, at most `max_bytes` (devices, FIFOs and /proc links are refused unread); with
    `roots`, also a file whose real path is outside them."""
    if roots is not None and not roots.contains(path):
        raise SourceError("a symlink to a file outside the checked folders; not analysed")
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SourceError("not a regular file; not analysed")
    if st.st_size > max_bytes:
        raise SourceError(f"file is {st.st_size} bytes, above the limit of {max_bytes} (--max-file-bytes); not analysed")
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    return _read_fd(fd, max_bytes)


def _read_fd(fd: int, max_bytes: int) -> bytes:
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped since the stat
            raise SourceError("not a regular file; not analysed")
        chunks, size = [], 0
        while size <= max_bytes:  # read to the end, but never more than the limit (a file may grow meanwhile)
            chunk = fh.read(min(max_bytes + 1 - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    if len(data) > max_bytes:
        raise SourceError(f"file is above the limit of {max_bytes} bytes (--max-file-bytes); not analysed")
    return data


def read_in_folder(folder_fd: int, name: str, max_bytes: int) -> bytes:
    """A regular file `name` directly in an open folder, never through a symlink; SourceError otherwise."""
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=folder_fd)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    return _read_fd(fd, max_bytes)


def is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


# ---------------------------------------------------------------- folders and markers
def open_folder(path: str | os.PathLike, create: bool = False, mode: int = 0o777) -> int:
    """A descriptor of the folder `path`, whose last component is a real folder, not a symlink (created when
    missing and `create`). Raises OSError otherwise."""
    path = os.fspath(path)
    if create:
        try:
            os.mkdir(path, mode)
        except FileExistsError:
            pass
    return os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)


def open_subfolder(folder_fd: int, name: str, create: bool = False, mode: int = 0o777) -> int:
    if create:
        try:
            os.mkdir(name, mode, dir_fd=folder_fd)
        except FileExistsError:
            pass
    return os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=folder_fd)


def create_marker(folder_fd: int, name: str, text: str, mode: int = 0o644) -> bool:
    """Create `name` in the folder with `text` unless something (a file, a symlink, dangling or not) already has
    the name: O_EXCL|O_NOFOLLOW never writes through a link. True when it was created."""
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode, dir_fd=folder_fd)
    except OSError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return True


def ignore_folder(path: str | os.PathLike, why: str) -> bool:
    """Give the folder `path` a `.gitignore` of `*` (it then ignores itself, as .gradguard_cache/ does), unless
    the folder is a symlink or something already has the name; True when it was created."""
    try:
        folder_fd = open_folder(path)
    except OSError:
        return False
    try:
        return create_marker(folder_fd, ".gitignore", f"# Created by gradguard: {why}\n*\n")
    finally:
        os.close(folder_fd)


# ---------------------------------------------------------------- writing
def replace_in_folder(folder_fd: int, name: str, data: bytes, mode: int = 0o644, sync: bool = True) -> None:
    """Write `data` to a temporary sibling and rename it over `name`, both inside the open folder. The temporary
    file is locked while it exists (see clean_stale_tmp) and removed on any failure, Ctrl-C included."""
    tmp, fd = _create_tmp(folder_fd, name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), mode & 0o7777)
            os.replace(tmp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder_fd)
        except OSError:
            pass
        raise


def _tmp_stem(name: str) -> str:
    """As much of `name` as its temporary sibling's name can hold: file systems take 255 bytes, and the sibling
    adds 24 (a 240-byte `训练…py` could not be fixed). Cut at a character, never inside one."""
    room = NAME_MAX - len(f"..{'0' * 8}{TMP_SUFFIX}")
    stem = name
    while len(os.fsencode(stem)) > room:
        stem = stem[:-1]
    return stem


def _create_tmp(folder_fd: int, name: str) -> tuple[str, int]:
    stem = _tmp_stem(name)
    for _ in range(100):
        tmp = f".{stem}.{secrets.token_hex(4)}{TMP_SUFFIX}"
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=folder_fd)
        except FileExistsError:
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        return tmp, fd
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def write_file(path: str, data: bytes, roots: Roots | None, mode: int) -> None:
    """Atomically replace the regular file `path` (through symlinks, to the real file) with `data`, only when its
    real path lies inside `roots`. Raises OSError (PermissionError for a target outside the roots)."""
    real = os.path.realpath(path)
    if roots is not None and not roots.contains(real):
        raise PermissionError(errno.EACCES, "the file is a symlink to a place outside the checked folders")
    folder, name = os.path.split(real)
    folder_fd = os.open(folder or ".", os.O_RDONLY | _DIRECTORY)
    try:
        # The folder may have been swapped for a symlink since realpath: check where the descriptor really is.
        if roots is not None and not roots.contains(_fd_path(folder_fd, folder)):
            raise PermissionError(errno.EACCES, "the file's folder moved outside the checked folders")
        try:
            st = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise
        if not stat.S_ISREG(st.st_mode):
            raise PermissionError(errno.EACCES, "not a regular file")
        clean_stale_tmp(folder_fd, name)
        replace_in_folder(folder_fd, name, data, mode)
    finally:
        os.close(folder_fd)


def write_output(path: str, data: bytes, mode: int = 0o644) -> None:
    """Atomically write a file gradguard makes itself (`.gradguard/trace.json`), creating its folders, through no
    symlink a repository can commit: each folder of a relative path is opened from the working directory without
    following links (an absolute path's folders are the user's own choice), and an existing file at `path` must be
    a regular file, not a link to `~/.bashrc`. Raises OSError."""
    folder, name = os.path.split(path)
    if not name:
        raise IsADirectoryError(errno.EISDIR, "not a file name", path)
    if os.path.isabs(folder):
        os.makedirs(folder, exist_ok=True)
        folder_fd = os.open(folder, os.O_RDONLY | _DIRECTORY)
    else:
        folder_fd = os.open(".", os.O_RDONLY | _DIRECTORY)
        for part in Path(folder).parts if folder else ():
            try:
                inner = open_subfolder(folder_fd, part, create=True)
            except OSError as exc:
                raise PermissionError(errno.EACCES, f"{part} is not a folder (a symlink?): {exc.strerror}") from exc
            finally:
                os.close(folder_fd)
            folder_fd = inner
    try:
        try:
            st = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISREG(st.st_mode):
                raise PermissionError(errno.EACCES, "not a regular file (a symlink?)")
        clean_stale_tmp(folder_fd, name)
        replace_in_folder(folder_fd, name, data, mode)
    finally:
        os.close(folder_fd)


def _fd_path(fd: int, fallback: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return fallback


# ---------------------------------------------------------------- litter of killed runs
def is_tmp_name(name: str) -> bool:
    return name.endswith(TMP_SUFFIX) and _TMP_NAME.match(name) is not None


def clean_stale_tmp(folder_fd: int, name: str | None = None) -> int:
    """Remove `.<name>.<random>.gradguard-tmp` files in the folder (for one `name`, or all) that no live writer
    holds locked. Returns how many were removed."""
    removed = 0
    try:
        entries = os.listdir(folder_fd)
    except OSError:
        return 0
    for entry in entries:
        if not is_tmp_name(entry):
            continue
        if name is not None and _TMP_NAME.match(entry).group("name") != _tmp_stem(name):
            continue
        try:
            fd = os.open(entry, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=folder_fd)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a writer is still at work
            os.unlink(entry, dir_fd=folder_fd)
            removed += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def clean_stale_tmp_at(folder: str | Path, names) -> int:
    """clean_stale_tmp for the temporary files among `names` (a folder listing) in `folder`."""
    if not any(is_tmp_name(n) for n in names):
        return 0
    try:
        fd = os.open(os.fspath(folder), os.O_RDONLY | _DIRECTORY)
    except OSError:
        return 0
    try:
        return clean_stale_tmp(fd)
    finally:
        os.close(fd)


def private_key(folder: str | os.PathLike, name: str = "cache-key", size: int = 32) -> bytes | None:
    """A per-user secret of `size` random bytes kept in `folder` (created 0700, file 0600), or None when it cannot
    be kept there."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        folder_fd = open_folder(folder)
    except OSError:
        return None
    try:
        st = os.fstat(folder_fd)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None  # another user could read or swap the key
        try:
            key = read_in_folder(folder_fd, name, size)
            if len(key) == size:
                return key
        except SourceError:
            pass
        key = secrets.token_bytes(size)
        try:
            fresh = f".{name}.{secrets.token_hex(8)}.new"
            fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=folder_fd)
            with os.fdopen(fd, "wb") as fh:
                fh.write(key)
            # Two runs starting together: the first key to be linked wins, the other run reads it back.
            try:
                os.link(fresh, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
            except FileExistsError:
                pass
            os.unlink(fresh, dir_fd=folder_fd)
            key = read_in_folder(folder_fd, name, size)
            return key if len(key) == size else None
        except (OSError, SourceError):
            return None
    finally:
        os.close(folder_fd)
