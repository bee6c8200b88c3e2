"""What the commands and the viewer write, and the error a user's input causes: outputs go to a
temporary file that is renamed into place, so a failed run never leaves a half-written file; a
UserError is printed as one line with exit code 2 (pipelines.commands.cli.main)."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


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
    return path


def write_atomic(path: str | Path, write) -> None:
    """write(tmp_path) then rename over path: readers never see a partial file."""
    path = check_output(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}") from None
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)        # mkstemp makes 0600; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise UserError(f"cannot write {path}: {e.strerror or e}") from None
        raise


def save_png(path, rgba) -> None:
    from PIL import Image
    write_atomic(path, lambda tmp: Image.fromarray(rgba).save(tmp, format="PNG"))


def save_json(path, obj) -> None:
    def write(tmp):
        with open(tmp, "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
    write_atomic(path, write)
