"""A named GPU (`Preset`): one typed record of sourced parameters per feature (DESIGN.md §5).

    preset.raster       RasterParams       IMR and DSBR: hierarchical Z, fast clear
    preset.binning      BinningParams      DSBR: bin sizes, batches (None elsewhere)
    preset.tiler        TilerParams        TBDR: tiles, tile memory, HSR (None elsewhere)
    preset.memory       MemoryParams       caches, DRAM; .config() -> renderer.memory.MemoryConfig
    preset.frontend     FrontendParams     the geometry front end (pipelines.presets.frontend)
    preset.compression  CompressionParams  framebuffer compression (pipelines.presets.compression)
    preset.rt           RTParams           the ray-tracing unit (pipelines.presets.rt)
    preset.texture      TextureParams      texture formats and the texture L1 (pipelines.presets.texture)
    preset.rates        RatesParams        per-unit rates and clock for the time model (pipelines.presets.rates)
    preset.energy       EnergyParams       pJ per byte and per op for the energy model (pipelines.presets.energy)

One lookup style: `preset.<record>.<name>` is the `Param` (value, source, label) and `.value`
its value, e.g. `int(preset.tiler.tile_px.value)`; a misspelt name raises AttributeError. A
field that is None is a unit the part does not have (no Infinity Cache: `preset.memory.llc_bytes
is None`); a field with a default is an optional feature whose default carries its own source.
`Preset.all_params()` lists every parameter (`tilesim presets -v`, the report);
`Preset.with_params(name=Param)` changes some (tests, claims, sweeps) and raises on a name that
none of the preset's records has."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterator

from pipelines.presets.compression import CompressionParams
from pipelines.presets.energy import EnergyParams
from pipelines.presets.frontend import FrontendParams
from pipelines.presets.params import (RB_L2_CLIENT, BinningParams, MemoryParams, Param, PresetError,
                                      RasterParams, Record, TilerParams)
from pipelines.presets.rates import RatesParams
from pipelines.presets.rt import RTParams
from pipelines.presets.texture import TextureParams

# Which records an architecture reads besides memory, front end, compression and RT.
SECTIONS = {"imr": ("raster",), "dsbr": ("raster", "binning"), "tbdr": ("tiler",)}
RECORDS = {"raster": RasterParams, "binning": BinningParams, "tiler": TilerParams,
           "memory": MemoryParams, "frontend": FrontendParams, "compression": CompressionParams,
           "rt": RTParams, "texture": TextureParams, "rates": RatesParams, "energy": EnergyParams}
_OWNER = {name: feature for feature, cls in RECORDS.items() for name in cls.names()}
assert len(_OWNER) == sum(len(cls.names()) for cls in RECORDS.values()), "a name in two records"


@dataclass(frozen=True)
class Preset:
    """A named GPU: its architecture and one record of sourced parameters per feature."""
    name: str
    architecture: str          # key of pipelines.registry.ARCHITECTURES
    description: str
    memory: MemoryParams
    frontend: FrontendParams
    compression: CompressionParams
    rt: RTParams
    texture: TextureParams
    raster: RasterParams | None = None          # imr, dsbr
    binning: BinningParams | None = None        # dsbr
    tiler: TilerParams | None = None            # tbdr
    rates: RatesParams | None = None            # every built-in preset (the time model needs them)
    energy: EnergyParams | None = None          # every built-in preset (the energy model needs them)

    def __post_init__(self):
        if self.architecture not in SECTIONS:
            raise PresetError(f"{self.name}: unknown architecture {self.architecture!r}")
        for feature in ("raster", "binning", "tiler"):
            if (getattr(self, feature) is not None) != (feature in SECTIONS[self.architecture]):
                raise PresetError(f"{self.name}: a {self.architecture} preset "
                                  f"{'needs' if feature in SECTIONS[self.architecture] else 'has no'} "
                                  f"{feature} parameters")
        if (self.memory.param_cache_bytes is not None) != (self.architecture == "tbdr"):
            raise PresetError(f"{self.name}: a parameter cache is a tiler's alone")

    @classmethod
    def of(cls, name: str, architecture: str, description: str, params: dict[str, Param],
           frontend: FrontendParams, compression: CompressionParams, rt: RTParams,
           texture: TextureParams, rates: RatesParams | None = None, energy: EnergyParams | None = None) -> "Preset":
        """A preset from one flat table of its raster and memory parameters, split into the
        records by name (a name no record has raises), and its feature records."""
        by_feature: dict[str, dict[str, Param]] = {f: {} for f in ("memory", *SECTIONS.get(architecture, ()))}
        for key, p in params.items():
            feature = _OWNER.get(key)
            if feature not in by_feature:
                raise PresetError(f"{name}: no {architecture} parameter {key!r}")
            by_feature[feature][key] = p
        if architecture != "tbdr":          # ROPs in front of L2: their sourced default
            by_feature["memory"].setdefault("rb_l2_client", RB_L2_CLIENT)
        return cls(name, architecture, description, frontend=frontend, compression=compression,
                   rt=rt, texture=texture, rates=rates, energy=energy,
                   **{f: RECORDS[f].of(ps) for f, ps in by_feature.items()})

    def memory_config(self):
        """The caches as this part runs them (renderer.memory.MemoryConfig): its memory
        record's, the L2 keeping compressed lines where its compression says it does."""
        return self.memory.config(bool(self.compression.compressed_in_cache.value))

    def records(self) -> Iterator[tuple[str, Record]]:
        for feature in RECORDS:
            record = getattr(self, feature)
            if record is not None:
                yield feature, record

    def all_params(self) -> dict[str, Param]:
        """Every parameter, record by record: name -> Param (the names are unique)."""
        return {k: p for _, record in self.records() for k, p in record.items()}

    def with_params(self, **changes: Param | None) -> "Preset":
        """This preset with some parameters replaced (None removes an optional unit, e.g.
        llc_bytes); a name that none of its records has raises PresetError."""
        per: dict[str, dict] = {}
        for key, p in changes.items():
            feature = _OWNER.get(key)
            if feature is None or getattr(self, feature) is None:
                raise PresetError(f"{self.name}: no parameter {key!r}")
            per.setdefault(feature, {})[key] = p
        return dataclasses.replace(self, **{f: dataclasses.replace(getattr(self, f), **ch)
                                            for f, ch in per.items()})
