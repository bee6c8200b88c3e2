"""What the commands and the viewer write, and the error a user's input causes: outputs go to a
temporary file that is renamed into place, so a failed run never leaves a half-written file; a
UserError is printed as one line with exit code 2 (pipelines.commands.cli.main)."""
from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

# What an existing output that is not a regular file is; renaming the temporary file over it
# would replace the node itself (a FIFO a reader waits on; as root, /dev/null for everyone)
SPECIAL = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
           (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class UserError(Exception):
    """An error caused by the input; printed as one line."""


def check_output(path) -> Path:
    """Raise UserError unless `path` can be created: called for every output before any work, so a
    bad output path fails in a second and never after other outputs were written."""
    path = Path(path)
    if not path.name or path.is_dir():
        raise UserError(f"cannot write {path}: is a directory")
    if not path.parent.is_dir():
        raise UserError(f"cannot write {path}: directory {path.parent} does not exist")
    if _is_null(path):
        return path
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None                             # not there yet (or a dangling link): created
    for test, what in SPECIAL:
        if mode is not None and test(mode):
            raise UserError(f"cannot write {path}: it is {what}, not a regular file")
    # the temporary file write_atomic will make, made once now: only trying tells (a read-only
    # mount, /proc, a full quota, permissions root ignores)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}") from None
    os.close(fd)
    os.unlink(tmp)
    return path


def _is_null(path: Path) -> bool:
    """Whether `path` is the null device: written through, as tools do (`-o /dev/null` to time a
    run without keeping its output), never replaced."""
    try:
        return os.path.samefile(path, os.devnull)
    except OSError:
        return False


def write_atomic(path: str | Path, write) -> None:
    """write(tmp_path) then rename over path: readers never see a partial file."""
    write_all([(path, write)])


def write_all(outputs) -> None:
    """[(path, write), ...]: every write(tmp_path) first, then every rename, so a failure leaves
    none of them (a screenshot is never left without its JSON)."""
    done, pending = [], []              # (tmp, path) written; (tmp, path) made
    try:
        for path, write in outputs:
            path = check_output(path)
            if _is_null(path):
                write(str(path))
                continue
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
            except OSError as e:
                raise UserError(f"cannot write {path}: {e.strerror or e}") from None
            os.close(fd)
            pending.append((tmp, path))
            try:
                write(tmp)
            except OSError as e:
                raise UserError(f"cannot write {path}: {e.strerror or e}") from None
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)    # mkstemp makes 0600; outputs are ordinary files
            done.append((tmp, path))
        for tmp, path in done:
            try:
                os.replace(tmp, path)
            except OSError as e:
                raise UserError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        for tmp, _ in pending:
            if os.path.exists(tmp):
                os.unlink(tmp)


def png_writer(rgba):
    from PIL import Image
    return lambda tmp: Image.fromarray(rgba).save(tmp, format="PNG")


def json_writer(obj):
    def write(tmp):
        with open(tmp, "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
    return write


def save_png(path, rgba) -> None:
    write_atomic(path, png_writer(rgba))


def save_json(path, obj) -> None:
    write_atomic(path, json_writer(obj))
