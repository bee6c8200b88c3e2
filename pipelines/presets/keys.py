"""Preset keys: the dotted names a user changes a preset by (`--set l2.size=8MiB`, preset files,
sweep grids), and the one table from each key to the record field it sets (DESIGN.md §5).

    from pipelines.presets.keys import apply_sets, parse_set
    p = apply_sets(get_preset("amd-rdna2"), [parse_set("l2.size=8MiB")], source="--set")
    p.memory.l2_bytes        # Param(8388608, "--set l2.size=8MiB", "user")

Consumes a Preset and (key, value) pairs, values as text with units ("8MiB", "256GB/s",
"128x128", "on") or as TOML gives them (int, float, bool, str); produces the Preset with those
fields replaced by Params labelled `user` and the preset's name extended with what changed. Every
bad input is a PresetError with one line: an unknown key (the nearest key suggested), a value of
the wrong type or unit, a value out of range, a key the preset's architecture does not have, or
caches that the memory model cannot build.

A record field without an entry in KEYS (a record added later) still gets a key,
`<record>.<field>`, typed from its built-in values: every parameter is a knob.
"""
from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass

from pipelines.presets.params import Param, PresetError
from pipelines.presets.preset import RECORDS, Preset
from renderer.box_sort import BOX_SORTS
from renderer.texture_formats import FORMATS

TEXTURE_FORMATS = tuple(FORMATS)

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
BYTE_UNITS = {"": 1, "b": 1, "kib": KIB, "mib": MIB, "gib": GIB,
              "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3}
RATE_UNITS = {"": 1.0, "gb/s": 1.0, "tb/s": 1000.0, "mb/s": 1e-3}      # to GB/s (decimal)
TRUE, FALSE = ("true", "on", "yes", "1"), ("false", "off", "no", "0")
TBDR_TILES = (16, 32, 64, 128, 256)       # pipelines.arch.tbdr.TILE_SIZES, smallest first
BIN_SIDES = (64, 128, 256, 512)           # the raster's 64-px tiles (renderer.binning.RASTER_TILE)
                                          # up to GFX9's largest bin (Mesa si_state_binning.c)

# kind -> the unit shown by `tilesim presets --keys`
UNITS = {"bytes": "B", "gbps": "GB/s", "px": "px", "bin": "WxH px", "int": "", "float": "",
         "bool": "", "choice": ""}


@dataclass(frozen=True)
class Key:
    """One knob: `name` sets `record.field`; `kind` says how its text parses (bytes with binary or
    decimal units, GB/s, px, a WxH bin, int, bool, one of `choices`); lo..hi bound it."""
    name: str
    record: str
    field: str
    kind: str
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()
    addable: bool = False          # may be set on a preset that lacks the unit (adds it)

    @property
    def unit(self) -> str:
        return UNITS[self.kind]

    def range_text(self) -> str:
        if self.kind == "bool":
            return "true|false"
        if self.choices:
            return "|".join(map(str, self.choices))
        if self.kind == "bin":
            return f"W,H in {'|'.join(map(str, BIN_SIDES))}"
        return f"{format_value(self, self.lo)}..{format_value(self, self.hi)}"

    def parse(self, raw) -> float | int | str | bool:
        """The native value of `raw` (text or a TOML value), checked against the range."""
        value = _parse(self, raw)
        if self.choices and value not in self.choices:
            raise PresetError(f"{self.name}={_show(raw)}: expected one of {', '.join(map(str, self.choices))}")
        if self.lo is not None and not (self.lo <= value <= self.hi):
            raise PresetError(f"{self.name}={_show(raw)}: out of range {self.range_text()}")
        return value


def _show(raw) -> str:
    return str(raw).lower() if isinstance(raw, bool) else str(raw)


def _parse(key: Key, raw):
    text = raw.strip() if isinstance(raw, str) else raw
    kind = key.kind
    if kind == "bool":
        if isinstance(text, bool):
            return text
        if isinstance(text, str) and text.lower() in TRUE + FALSE:
            return text.lower() in TRUE
        raise PresetError(f"{key.name}={_show(raw)}: expected true or false")
    if kind == "choice" and all(isinstance(c, str) for c in key.choices):
        if isinstance(text, str):
            return text
        raise PresetError(f"{key.name}={_show(raw)}: expected one of {', '.join(key.choices)}")
    if kind == "bin":
        m = re.fullmatch(r"(\d+)\s*[x×]\s*(\d+)", text) if isinstance(text, str) else None
        if not m:
            raise PresetError(f"{key.name}={_show(raw)}: expected WIDTHxHEIGHT in pixels, e.g. 128x128")
        w, h = int(m[1]), int(m[2])
        if w not in BIN_SIDES or h not in BIN_SIDES:
            raise PresetError(f"{key.name}={_show(raw)}: out of range (each side one of "
                              f"{', '.join(map(str, BIN_SIDES))})")
        return f"{w}x{h}"
    if isinstance(text, bool):
        raise PresetError(f"{key.name}={_show(raw)}: expected a number, not a boolean")
    if kind == "float":
        if isinstance(text, (int, float)):
            return float(text)
        try:
            return float(text)
        except (TypeError, ValueError):
            raise PresetError(f"{key.name}={_show(raw)}: expected a number") from None
    if kind == "gbps":
        if isinstance(text, (int, float)):
            return float(text)
        m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*([a-z/]*)", str(text).lower())
        if not m or m[2] not in RATE_UNITS:
            raise PresetError(f"{key.name}={_show(raw)}: expected a bandwidth, e.g. 256GB/s, 1.5TB/s")
        return float(m[1]) * RATE_UNITS[m[2]]
    # integers: bytes, px, counts, numeric choices
    if isinstance(text, float):
        if not text.is_integer():
            raise PresetError(f"{key.name}={_show(raw)}: expected a whole number")
        return int(text)
    if isinstance(text, int):
        return text
    units = BYTE_UNITS if kind == "bytes" else ({"": 1, "px": 1} if kind == "px" else {"": 1})
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*([a-z]*)", str(text).lower())
    if not m or m[2] not in units:
        example = {"bytes": "8MiB, 512KiB or 4194304", "px": "32 or 32px"}.get(kind, "a whole number")
        raise PresetError(f"{key.name}={_show(raw)}: expected {example}")
    value = float(m[1]) * units[m[2]]
    if not value.is_integer():
        raise PresetError(f"{key.name}={_show(raw)}: not a whole number of {'bytes' if kind == 'bytes' else 'units'}")
    return int(value)


def format_value(key: Key, value) -> str:
    """A value as a user writes it: 8 MiB, 512 GB/s, 32 px, true."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if key.kind == "bytes" and isinstance(value, int):
        for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
            if value >= size and value % size == 0:
                return f"{value // size}{unit}"
        return f"{value}B"
    if key.kind == "gbps":
        return f"{value:g}GB/s"
    if key.kind == "px":
        return f"{value}px"
    return str(value)


def _k(name, record, field, kind, lo=None, hi=None, choices=(), addable=False) -> Key:
    return Key(name, record, field, kind, lo, hi, tuple(choices), addable)


# The one table: key -> record field. Ranges are what the memory model and the architectures
# accept (a cache holds at least one set of its ways; TBDR tiles are pipelines.arch.tbdr's sizes).
KEYS: tuple[Key, ...] = (
    _k("cache.line", "memory", "cache_line_bytes", "choice", choices=(32, 64, 128, 256)),
    _k("l2.size", "memory", "l2_bytes", "bytes", 16 * KIB, GIB),
    _k("l2.ways", "memory", "l2_ways", "int", 1, 64),
    _k("dram.bandwidth", "memory", "dram_gbps", "gbps", 0.1, 100_000.0),
    _k("llc.size", "memory", "llc_bytes", "bytes", 64 * KIB, 4 * GIB, addable=True),
    _k("llc.ways", "memory", "llc_ways", "int", 1, 64, addable=True),
    _k("rop.color.size", "memory", "rop_color_cache_bytes", "bytes", KIB, 64 * MIB),
    _k("rop.color.ways", "memory", "rop_color_cache_ways", "int", 1, 64),
    _k("rop.depth.size", "memory", "rop_depth_cache_bytes", "bytes", KIB, 64 * MIB),
    _k("rop.depth.ways", "memory", "rop_depth_cache_ways", "int", 1, 64),
    _k("rop.l2_client", "memory", "rb_l2_client", "bool"),
    _k("tbdr.param_cache.size", "memory", "param_cache_bytes", "bytes", KIB, 64 * MIB),
    _k("tbdr.param_cache.ways", "memory", "param_cache_ways", "int", 1, 64),
    _k("raster.hiz", "raster", "hiz", "bool"),
    _k("raster.fast_clear", "raster", "fast_clear", "bool"),
    _k("dsbr.binning", "binning", "binning", "bool"),
    _k("dsbr.bin", "binning", "bin_size", "bin", addable=True),
    _k("dsbr.rbs", "binning", "num_rbs", "int", 1, 64),
    _k("dsbr.l2_channels", "binning", "num_l2_channels", "int", 1, 64),
    _k("dsbr.max_alloc", "binning", "max_alloc_count", "int", 1, 4096),
    _k("dsbr.bin_table", "binning", "bin_table", "choice", choices=("gfx9", "gfx10")),
    _k("dsbr.min_bin_height", "binning", "min_bin_height", "px", choices=(64, 128)),
    _k("dsbr.deferred_shading", "binning", "batch_deferred_shading", "bool"),
    _k("tbdr.tile", "tiler", "tile_px", "px", choices=TBDR_TILES),
    _k("tbdr.tile_memory", "tiler", "tile_memory_bytes", "bytes", KIB, 256 * MIB),
    _k("tbdr.param_buffer", "tiler", "param_buffer_bytes", "bytes", 64 * KIB, 16 * GIB),
    _k("tbdr.hsr", "tiler", "hsr", "bool"),
    _k("frontend.path", "frontend", "frontend", "choice", choices=("legacy", "ngg", "mesh")),
    _k("frontend.ptc_entries", "frontend", "ptc_entries", "int", 1, 1024),
    _k("frontend.fetch_wave", "frontend", "fetch_wave", "choice", choices=(8, 16, 32, 64, 128)),
    _k("frontend.mesh_shading", "frontend", "mesh_shading", "bool"),
    _k("ngg.max_verts", "frontend", "ngg_max_verts", "int", 3, 256),
    _k("ngg.max_prims", "frontend", "ngg_max_prims", "int", 1, 256),
    _k("ngg.cull_ops", "frontend", "cull_alu_ops", "int", 0, 10_000),
    _k("mesh.max_verts", "frontend", "meshlet_max_verts", "int", 3, 256),
    _k("mesh.max_prims", "frontend", "meshlet_max_prims", "int", 1, 512),
    _k("mesh.output_budget", "frontend", "mesh_output_budget_bytes", "bytes", KIB, 16 * MIB),
    _k("mesh.prim_cull", "frontend", "mesh_prim_cull", "bool"),
    _k("comp.codec", "compression", "codec", "choice", choices=("none", "dcc", "afbc", "apple", "ubwc")),
    _k("comp.dcc_block", "compression", "dcc_max_compressed_block", "choice", choices=(64, 128, 256)),
    _k("comp.ps_reads", "compression", "ps_reads_compressed", "bool"),
    _k("comp.cs_reads", "compression", "cs_reads_compressed", "bool"),
    _k("comp.cs_writes", "compression", "cs_writes_compressed", "bool"),
    _k("comp.merge_partial", "compression", "merges_partial_writes", "bool"),
    _k("comp.in_cache", "compression", "compressed_in_cache", "bool"),
    _k("comp.te", "compression", "transaction_elimination", "bool"),
    _k("comp.depth", "compression", "depth_codec", "choice", choices=("none", "htile")),
    _k("comp.display_reads", "compression", "display_reads_compressed", "bool"),
    _k("rt.layout", "rt", "rt_layout", "choice", choices=("bvh2", "bvh4", "bvh8", "bvh8-obb")),
    _k("rt.box_tests", "rt", "rt_box_tests_per_clk", "int", 1, 64),
    _k("rt.tri_tests", "rt", "rt_tri_tests_per_clk", "int", 1, 64),
    _k("rt.stack", "rt", "rt_stack_entries", "int", 1, 256),
    _k("rt.dual_fallback", "rt", "rt_dual_fallback", "bool"),
    _k("rt.obb", "rt", "rt_obb", "bool"),
    _k("rt.flags_in_hw", "rt", "rt_ray_flags_in_hw", "bool"),
    _k("rt.instance_xform_in_hw", "rt", "rt_instance_xform_in_hw", "bool"),
    _k("rt.prim_tris", "rt", "rt_prim_tris", "int", 1, 4),
    _k("rt.stack_location", "rt", "rt_stack_location", "choice", choices=("lds", "registers", "dedicated")),
    _k("rt.stack_entry", "rt", "rt_stack_entry_bytes", "int", 1, 64),
    _k("rt.stack_overflow", "rt", "rt_stack_overflow", "choice", choices=("restart", "spill")),
    _k("rt.box_sort", "rt", "rt_box_sort", "choice", choices=tuple(BOX_SORTS)),
    _k("rt.l0_size", "rt", "rt_l0_bytes", "bytes", 256, 64 * MIB),
    _k("rt.l0_ways", "rt", "rt_l0_ways", "int", 1, 64),
    _k("rt.l1_size", "rt", "rt_l1_bytes", "bytes", 256, 64 * MIB, addable=True),
    _k("rt.l1_ways", "rt", "rt_l1_ways", "int", 1, 64, addable=True),
    _k("tex.format", "texture", "tex_format", "choice", choices=TEXTURE_FORMATS),
    _k("tex.alpha_format", "texture", "tex_alpha_format", "choice", choices=TEXTURE_FORMATS),
    _k("tex.l1_size", "texture", "tex_l1_bytes", "bytes", 256, 16 * MIB),
    _k("tex.l1_line", "texture", "tex_l1_line_bytes", "choice", choices=(16, 32, 64, 128, 256)),
    _k("tex.l1_ways", "texture", "tex_l1_ways", "int", 1, 1024),
)
NOT_KEYS = {("rt", "rt_params_from")}     # provenance, not a knob
# Cache pairs that come and go together (an optional unit needs both its size and its ways).
PAIRS = (("llc_bytes", "llc_ways"),)


def _inferred(record: str, field: str) -> Key:
    """A key for a field the table does not name: typed from the built-in presets' values."""
    from pipelines.presets import PRESETS
    values = [getattr(getattr(p, record), field).value for p in PRESETS.values()
              if getattr(p, record, None) is not None and getattr(getattr(p, record), field) is not None]
    first = values[0] if values else 0.0
    if isinstance(first, bool):
        return _k(f"{record}.{field}", record, field, "bool")
    if isinstance(first, int):
        return _k(f"{record}.{field}", record, field, "int", 0, 1 << 62)
    if isinstance(first, float):
        return _k(f"{record}.{field}", record, field, "float", 0.0, 1e18)
    return _k(f"{record}.{field}", record, field, "choice", choices=tuple(sorted(set(map(str, values)))))


def all_keys() -> dict[str, Key]:
    """Every key by name: the table's, then one per record field the table does not name."""
    out = {k.name: k for k in KEYS}
    named = {(k.record, k.field) for k in KEYS} | NOT_KEYS
    for record, cls in RECORDS.items():
        for field in cls.names():
            if (record, field) not in named:
                key = _inferred(record, field)
                out[key.name] = key
    return out


def get_key(name: str) -> Key:
    keys = all_keys()
    if name in keys:
        return keys[name]
    near = difflib.get_close_matches(name, list(keys), n=1, cutoff=0.5)
    hint = f" (did you mean {near[0]}?)" if near else " (see tilesim presets --keys)"
    raise PresetError(f"unknown key {name!r}{hint}")


def parse_set(text: str) -> tuple[str, str]:
    """'l2.size=8MiB' -> ('l2.size', '8MiB'); the key is checked to exist."""
    name, eq, value = text.partition("=")
    name = name.strip()
    if not eq or not name or not value.strip():
        raise PresetError(f"--set {text!r}: expected KEY=VALUE, e.g. l2.size=8MiB")
    get_key(name)
    return name, value.strip()


def key_value(preset: Preset, key: Key):
    """The preset's value of `key`, None where the part lacks the unit."""
    record = getattr(preset, key.record, None)
    p = None if record is None else getattr(record, key.field)
    return None if p is None else p.value


def apply_sets(preset: Preset, sets, source: str = "--set", rename: bool = True,
               label: str = "user") -> Preset:
    """`preset` with each (key, value) of `sets` applied: Param(value, f"{source} key=value",
    label). `sets` values are raw (text or TOML values) or (value, source, label) triples (a
    preset file's own sourced values). Raises PresetError (one line) on any bad input."""
    changes: dict[str, Param | None] = {}
    shown = []
    for name, raw in sets:
        key = get_key(name)
        record = getattr(preset, key.record, None)
        if record is None or (getattr(record, key.field) is None and not key.addable):
            raise PresetError(f"{name}: preset {preset.name} ({preset.architecture}) has no such "
                              f"parameter")
        value_raw, src, lab = raw if isinstance(raw, tuple) else (raw, None, label)
        value = key.parse(value_raw)
        text = format_value(key, value)
        changes[key.field] = Param(value, src or f"{source} {name}={text}", lab)
        shown.append(f"{name}={text}")
    out = preset.with_params(**changes) if changes else preset
    if rename and shown:
        out = dataclasses.replace(out, name=f"{preset.name}[{','.join(shown)}]")
    check(out)
    return out


def check(preset: Preset) -> None:
    """The memory model can build the preset's caches (each holds at least one set of its ways
    of lines; an optional cache has both its size and its ways; the ray unit's have a power of
    two of sets, pipelines.presets.rt.RTParams.caches)."""
    m = preset.memory
    for size, ways in PAIRS:
        if (getattr(m, size) is None) != (getattr(m, ways) is None):
            missing = size if getattr(m, size) is None else ways
            name = next(k.name for k in KEYS if k.field == missing)
            raise PresetError(f"preset {preset.name}: set {name} too (a cache needs its size and its ways)")
    try:
        config = m.config()
        for c in config.caches:
            c.n_sets(config.line_bytes)
    except ValueError as e:
        raise PresetError(f"preset {preset.name}: {e}") from None
    if getattr(preset, "rt", None) is not None:
        try:
            preset.rt.caches(int(m.cache_line_bytes.value))
        except PresetError as e:
            raise PresetError(f"preset {preset.name}: {e}") from None
    try:
        preset.texture.unit(int(m.cache_line_bytes.value))
    except PresetError as e:
        raise PresetError(f"preset {preset.name}: {e}") from None


def keys_for(preset: Preset) -> dict[str, Key]:
    """The keys this preset has a value for (or may add)."""
    return {n: k for n, k in all_keys().items()
            if getattr(preset, k.record, None) is not None
            and (key_value(preset, k) is not None or k.addable)}


def print_keys(presets) -> None:
    """`tilesim presets --keys`: each key, its type, unit and range, and its value in each of
    `presets` (grouped: value (presets having it)); '-' where the part lacks the unit."""
    print(f"{'key':<24} {'type':<7} {'unit':<7} {'range':<30} built-in value")
    for name, key in all_keys().items():
        groups: dict[str, list[str]] = {}
        for p in presets:
            if getattr(p, key.record, None) is None:
                continue                     # an architecture without this record
            groups.setdefault(format_value(key, key_value(p, key)), []).append(p.name)
        if not groups:
            continue
        values = "; ".join(v if len(groups) == 1 and len(presets) == 1 else f"{v} ({', '.join(ps)})"
                           for v, ps in groups.items())
        kind = "int" if key.kind in ("px", "bytes") else key.kind
        print(f"{name:<24} {kind:<7} {key.unit:<7} {key.range_text():<30} {values}")
