"""Files beside a store: atomic writes (a temporary ``<target>.tmp-<pid>-<random>`` synced and
renamed over the target, which holds its old or its new content, never a part), the cleanup of
temporaries killed processes left, and what a write may replace."""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

#: The first 16 bytes of every SQLite 3 database file.
SQLITE_HEADER = b"SQLite format 3\x00"


def temp_name(target: Path) -> Path:
    """A fresh temporary path beside ``target`` carrying this process's id."""
    return target.with_name(f"{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def remove_orphans(target: Path) -> int:
    """Delete temporary files of ``target`` left by processes that no longer run; returns how
    many were removed."""
    removed = 0
    for tmp in target.parent.glob(target.name + "*.tmp-*"):
        try:
            pid = int(tmp.name.rsplit(".tmp-", 1)[1].split("-")[0])
        except (IndexError, ValueError):
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            tmp.unlink(missing_ok=True)
            removed += 1
        except OSError:  # pragma: no cover - another user's live process
            pass
    return removed


def check_replaceable(target: Path) -> Path:
    """``target`` if it is absent or a regular file (not a link), else ``ValueError``; read with
    ``lstat``, so a FIFO is never opened."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return target
    if not stat.S_ISREG(mode):
        kind = {
            stat.S_IFLNK: "a symbolic link",
            stat.S_IFDIR: "a directory",
            stat.S_IFCHR: "a character device",
            stat.S_IFBLK: "a block device",
            stat.S_IFIFO: "a FIFO",
            stat.S_IFSOCK: "a socket",
        }[stat.S_IFMT(mode)]
        raise ValueError(f"{target} is {kind}; a file is written only over a regular file")
    return target


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is an existing regular file that starts with the SQLite header."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            return fh.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name the same file (through links too); False if either is absent."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


@contextmanager
def atomic_text(target: Path, encoding: str = "utf-8") -> Iterator[IO[str]]:
    """Write ``target`` atomically through a temporary file; a file-system error is an
    ``OSError`` naming ``target``, which is then unchanged."""
    check_replaceable(target)
    remove_orphans(target)
    tmp = temp_name(target)
    try:
        with open(tmp, "x", encoding=encoding, newline="\n") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        check_replaceable(target)
        os.replace(tmp, target)
    except OSError as error:
        reason = error.strerror or str(error)
        raise type(error)(error.errno, f"cannot write {target}: {reason}") from error
    finally:
        tmp.unlink(missing_ok=True)
    if os.name == "posix":  # make the rename durable
        fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
