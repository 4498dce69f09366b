"""Where commands write: complete or absent, never a mixture.

Directories (a run's, a validation's) are written into a new temporary
directory beside their target and renamed into place once every file is
in it. A target that exists is refused unless the command was asked to
overwrite, which replaces it whole, and only a directory undertow wrote
(or an empty one). A lock beside the target stops two commands writing one
place at once. Until the rename, the temporary directory holds a file named
INCOMPLETE (as does each run directory the core is still writing), which
`undertow summary` refuses.

Files (models, plots) are written to a temporary file beside the target and
renamed over it; a target that exists and is not a regular file (a device,
a FIFO, a symlink, a directory) is refused.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

#: Present in a directory whose writing has not finished.
INCOMPLETE = "INCOMPLETE"
#: Present in every directory this module completed: what --overwrite may replace.
MARK = ".undertow-output"


class OutputError(Exception):
    """An output place that cannot be used, in one line (exit status 2)."""


def _why(e: OSError) -> str:
    return e.strerror or str(e)


def output_path(text: str, what: str) -> Path:
    """A path given on the command line for `what`; empty is refused."""
    if not text or not text.strip():
        raise OutputError(f"{what}: an empty path names no place to write")
    return Path(text)


def is_incomplete(d: Path) -> bool:
    """A directory (or the temporary directory holding it) still being written."""
    return (d / INCOMPLETE).exists() or (d.parent / INCOMPLETE).exists()


@contextmanager
def _lock(target: Path) -> Iterator[None]:
    """Holds an exclusive lock named for `target`, refusing if another holds it."""
    path = target.parent / f".{target.name}.lock"
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        except OSError as e:
            raise OutputError(f"{target}: cannot write here: {_why(e)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise OutputError(f"{target} is being written by another undertow command: wait for it to finish") from None
        # The lock file may have been removed (by its last holder) between
        # the open and the lock: then this lock guards nothing.
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(fd)


def _replaceable(target: Path) -> None:
    """Refuses to replace anything but a directory undertow completed, or an empty one."""
    st = os.lstat(target)
    if not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{target} exists and is not a directory: refusing to replace it")
    if not (target / MARK).exists() and any(target.iterdir()):
        raise OutputError(f"{target} holds files undertow did not write: refusing to replace it (choose another place, or remove it)")


@contextmanager
def new_directory(target: Path, overwrite: bool = False) -> Iterator[Path]:
    """Yields a temporary directory that becomes `target` when the block ends
    without an exception; on an exception (or interruption) it is removed and
    `target` is left as it was."""
    target = Path(os.path.abspath(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{target}: cannot create its parent directory: {_why(e)}") from None
    with _lock(target):
        exists = os.path.lexists(target)
        if exists and not overwrite:
            raise OutputError(f"{target} exists: choose another place, or pass --overwrite to replace it whole")
        if exists:
            _replaceable(target)
        tmp = target.parent / f".{target.name}.partial-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            tmp.mkdir()
            (tmp / INCOMPLETE).write_text("undertow is writing this directory, or was stopped before it finished\n")
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise OutputError(f"{target}: cannot write here: {_why(e)}") from None
        try:
            yield tmp
            (tmp / MARK).write_text("written by undertow; `--overwrite` may replace this directory\n")
            (tmp / INCOMPLETE).unlink(missing_ok=True)
            old = target.parent / f".{target.name}.old-{os.getpid()}"
            if exists:
                os.rename(target, old)
            os.rename(tmp, target)
            if exists:
                shutil.rmtree(old, ignore_errors=True)
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise OutputError(f"{target}: cannot write: {_why(e)}") from None
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def check_file_target(target: Path) -> Path:
    """`target` if a file may be written there: absent or a regular file, in
    an existing directory."""
    if os.path.lexists(target):
        if not stat.S_ISREG(os.lstat(target).st_mode):
            raise OutputError(f"{target} exists and is not a regular file: refusing to replace it")
    parent = target.parent
    if not parent.exists():
        raise OutputError(f"{target}: cannot write: no directory {parent}")
    if not parent.is_dir():
        raise OutputError(f"{target}: cannot write: {parent} is not a directory")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"{target}: cannot write in {parent}: {os.strerror(errno.EACCES)}")
    return target


@contextmanager
def new_file(target: Path) -> Iterator[Path]:
    """Yields a temporary path (same directory and suffix) renamed over
    `target` when the block ends without an exception."""
    check_file_target(target)
    tmp = target.parent / f".{target.stem}.partial-{os.getpid()}{target.suffix}"
    try:
        yield tmp
        os.replace(tmp, target)
    except OSError as e:
        _remove(tmp)
        raise OutputError(f"{target}: cannot write: {_why(e)}") from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass
