"""Writing files the way users expect: whole or not at all, where the path points, as readable as
the user's other files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` through a temp file renamed into place, so a failure never leaves a
    partial file; returns the path written.

    A symlink is written through (its target changes, the link stays). A new file gets the
    permissions the umask allows, an existing one keeps its own; a read-only file is refused.
    """
    if not str(path):
        raise ValueError("no file name given: choose where to write")
    target = Path(os.path.realpath(path))
    if target.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a folder: give a file name")
    if not target.parent.is_dir():
        raise FileNotFoundError(f"folder {str(target.parent)!r} does not exist")
    # Renaming over a file needs only the folder's permission: ask the file's own (its write bits,
    # which even root keeps to here).
    if target.exists() and (not target.stat().st_mode & 0o222 or not os.access(target, os.W_OK)):
        raise PermissionError(f"{str(target)!r} is read-only: nothing written")
    mode = target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp makes the file private (0600); the result should read like any other file.
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        # The hidden temporary file is ours, not the user's: name the file they asked for.
        message = f"could not write {str(path)!r}: {exc.strerror or exc}; nothing written"
        raise (OSError(exc.errno, message) if exc.errno is not None else OSError(message)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0o022)  # the only portable way to read it is to set it
    os.umask(mask)
    return mask
