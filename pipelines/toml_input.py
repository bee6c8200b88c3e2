"""A TOML document a user hands the CLI (a preset file, a sweep spec), read with one rule for
bad input: a file too large, missing, unreadable, not TOML, or with a top-level field the format
does not have is one line naming the file, raised as the caller's error type (the CLI turns it
into exit 2)."""
from __future__ import annotations

import difflib
import tomllib
from pathlib import Path


def read_document(path: Path, what: str, max_bytes: int, fields: tuple[str, ...],
                  error: type[Exception], list_fields: bool = False) -> dict:
    """The TOML table in `path` (a `what`, e.g. "preset file"), at most `max_bytes` long, whose
    top-level keys are among `fields` (an unknown one names the nearest; `list_fields`: or
    lists them all when none is near)."""
    def bad(message: str):
        raise error(f"{what} {path}: {message}")
    try:
        if path.stat().st_size > max_bytes:
            bad(f"larger than {max_bytes // 1024} KiB")
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{what} {path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        bad(f"not valid TOML: {e}")
    except (OSError, UnicodeDecodeError) as e:
        bad(f"cannot read it: {getattr(e, 'strerror', None) or e}")
    unknown = set(doc) - set(fields)
    if unknown:
        name = sorted(unknown)[0]
        near = difflib.get_close_matches(name, fields, n=1)
        hint = (f" (did you mean {near[0]}?)" if near else
                f" (fields: {', '.join(fields)})" if list_fields else "")
        bad(f"unknown field {name!r}{hint}")
    return doc
