"""Preset files and preset specs: a user's GPU as a TOML file that starts from a built-in preset,
and the one function that turns what a command line names into a Preset.

    # my-gpu.toml
    name = "my-gpu"
    base = "amd-rdna2"
    description = "RDNA 2 with an 8 MiB L2 and 128x128 bins"
    [set]
    l2.size = "8MiB"                        # a user's value: labelled user, sourced to the file
    "dsbr.bin" = { value = "128x128", label = "assumed", source = "why, and where from" }

    resolve("my-gpu.toml", sets=[("dram.bandwidth", "256GB/s")])   # -> Preset

Consumes: a preset spec (a built-in name, the name of a file in EXAMPLES, or a path to a .toml
file) and --set pairs (pipelines.presets.keys). Produces a Preset whose changed parameters carry
label `user` (or the label and source the file gives them), and `preset_hash`, the digest of
every parameter value a frame reads (sweeps key their results by it). Every bad input is a
PresetError with one line: a file that cannot be read or does not parse, an unknown top-level
field, a base that does not exist, and any bad key or value.
"""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
from pathlib import Path

from pipelines.presets import PRESETS
from pipelines.presets.keys import apply_sets
from pipelines.presets.params import LABELS, PresetError
from pipelines.presets.preset import Preset
from pipelines.toml_input import read_document

EXAMPLES = Path(__file__).with_name("examples")     # preset files shipped with tilesim
MAX_FILE_BYTES = 1 << 20                            # a preset file is a page of text
FIELDS = ("name", "base", "description", "set")
MAX_DEPTH = 8                                       # files whose base is a file, at most


def example_files() -> dict[str, Path]:
    """name -> path of every shipped preset file (their names are their stems)."""
    return {p.stem: p for p in sorted(EXAMPLES.glob("*.toml"))}


def is_file_spec(spec: str) -> bool:
    return spec.lower().endswith(".toml") or os.sep in spec


def _flatten(table: dict, prefix: str = "") -> dict:
    """TOML's nested tables (l2.size = ... makes {"l2": {"size": ...}}) as dotted keys; a table
    with a `value` is one sourced value."""
    out = {}
    for k, v in table.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and "value" not in v:
            out.update(_flatten(v, name + "."))
        else:
            out[name] = v
    return out


def _sourced(path: Path, key: str, v):
    """A [set] entry as apply_sets takes it: a plain value (label user, sourced to the file) or
    a (value, source, label) triple from {value, source, label}."""
    if not isinstance(v, dict):
        return v if not isinstance(v, (list, dict)) else _bad(path, f"{key}: expected one value")
    extra = set(v) - {"value", "source", "label"}
    if extra:
        _bad(path, f"{key}: unknown field {sorted(extra)[0]!r} (value, source, label)")
    label = v.get("label", "user")
    if label not in LABELS:
        _bad(path, f"{key}: label {label!r} is not one of {', '.join(LABELS)}")
    source = v.get("source")
    if label != "user" and not (isinstance(source, str) and source.strip()):
        _bad(path, f"{key}: a {label} value needs its source")
    return (v["value"], f"{path.name}: {source}" if source else None, label)


def _bad(path: Path, message: str):
    raise PresetError(f"preset file {path}: {message}")


def load_file(path: str | Path, depth: int = 0) -> Preset:
    """The preset a TOML file describes (module docstring)."""
    path = Path(path)
    doc = read_document(path, "preset file", MAX_FILE_BYTES, FIELDS, PresetError, list_fields=True)
    for field in ("name", "base"):
        if not isinstance(doc.get(field), str) or not doc[field].strip():
            _bad(path, f"needs a {field} (a string)")
    if "," in doc["name"]:
        _bad(path, "a preset name cannot hold a comma")
    if not isinstance(doc.get("description", ""), str) or not isinstance(doc.get("set", {}), dict):
        _bad(path, "description is a string and [set] a table")
    if depth >= MAX_DEPTH:
        _bad(path, f"bases nest deeper than {MAX_DEPTH} files")
    base_spec = doc["base"]
    if is_file_spec(base_spec) and not os.path.isabs(base_spec):
        base_spec = str(path.parent / base_spec)
    try:
        base = _resolve_one(base_spec, depth + 1)
    except PresetError as e:
        _bad(path, f"base: {e}")
    sets = [(k, _sourced(path, k, v)) for k, v in _flatten(doc.get("set", {})).items()]
    preset = apply_sets(base, sets, source=path.name, rename=False)
    return dataclasses.replace(preset, name=doc["name"].strip(), description=doc.get(
        "description") or f"{base.name} with {len(sets)} parameter(s) from {path.name}")


def _resolve_one(spec: str, depth: int = 0) -> Preset:
    if is_file_spec(spec):
        return load_file(spec, depth)
    if spec in PRESETS:
        return PRESETS[spec]
    examples = example_files()
    if spec in examples:
        return load_file(examples[spec], depth)
    names = [*PRESETS, *examples]
    near = difflib.get_close_matches(spec, names, n=1)
    hint = f"did you mean {near[0]}? " if near else ""
    raise PresetError(f"unknown preset {spec!r} ({hint}presets: {', '.join(names)}; or a .toml file)")


def resolve(spec: str, sets=()) -> Preset:
    """The preset `spec` names (a built-in, a shipped file's name, a .toml path), with `sets`
    ((key, text) pairs from --set) applied, labelled user."""
    preset = _resolve_one(spec.strip())
    return apply_sets(preset, list(sets), source="--set") if sets else preset


def preset_hash(preset: Preset) -> str:
    """A digest of the architecture and every parameter value (not names, sources or labels):
    two presets that render alike hash alike."""
    values = {k: p.value for k, p in preset.all_params().items()}
    text = json.dumps([preset.architecture, values], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
