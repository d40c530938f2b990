"""Files beside a store: atomic writes through named temporary files, their cleanup, and the
recognition of SQLite databases (so an export never overwrites one).

A temporary file is named ``<target>.tmp-<pid>-<random>`` in the target's directory, written,
flushed to disk and renamed over the target (``os.replace``, atomic on POSIX and Windows): the
target is either its old or its new content, never a part. A process killed mid-write leaves
its temporary file; :func:`remove_orphans` deletes those of processes that no longer run.
"""

from __future__ import annotations

import os
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
    """Delete temporary files of ``target`` (``<name>*.tmp-<pid>-*``) left by processes that no
    longer run; returns how many were removed."""
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
        except (PermissionError, OSError):  # pragma: no cover - another user's live process
            pass
    return removed


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is an existing file that starts with the SQLite header."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return False


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name the same file (through links too); False if either is absent."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


@contextmanager
def atomic_text(target: Path, encoding: str = "utf-8") -> Iterator[IO[str]]:
    """Write ``target`` atomically: a text handle on a temporary file, flushed, synced and
    renamed over ``target`` when the block succeeds, deleted when it fails."""
    remove_orphans(target)
    tmp = temp_name(target)
    try:
        with open(tmp, "x", encoding=encoding, newline="\n") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _sync_dir(target.parent)


def _sync_dir(directory: Path) -> None:
    """Make a rename durable (POSIX: fsync the directory; not possible on Windows)."""
    if os.name != "posix":  # pragma: no cover
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = [
    "SQLITE_HEADER",
    "atomic_text",
    "is_sqlite_file",
    "remove_orphans",
    "same_file",
    "temp_name",
]
