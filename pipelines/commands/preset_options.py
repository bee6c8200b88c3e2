"""The preset options every command shares: `--preset` takes a built-in name, a shipped preset
file's name or a .toml path (pipelines.presets.files), and `--set KEY=VALUE` (repeatable) changes
a parameter of every preset the command runs (pipelines.presets.keys).

Importing this module imports nothing heavy (argparse only), so the viewer's parser can use it;
`presets_from_args` imports the presets when a command runs. Consumes argparse namespaces;
produces Presets, and the lines that list the parameters a user changed (`user_lines`).
"""
from __future__ import annotations

SET_HELP = ("change a preset parameter, with its unit where it has one (repeatable): "
            "--set l2.size=8MiB --set dsbr.bin=128x128 --set dram.bandwidth=256GB/s; "
            "`tilesim presets --keys` lists the keys")


TEXTURE_FORMATS = ("rgba8", "bc1", "bc3", "bc7", "etc2-rgb", "etc2-rgba", "astc-4x4", "astc-6x6",
                   "astc-8x8")          # renderer.texture_formats.FORMATS (not imported: heavy)


def add_set_option(parser) -> None:
    """--set, and --texture-format F: the same as --set tex.format=F --set tex.alpha_format=F."""
    import argparse

    class TextureFormat(argparse.Action):
        def __call__(self, parser, namespace, value, option_string=None):
            sets = list(getattr(namespace, "set", None) or [])
            namespace.set = sets + [f"tex.format={value}", f"tex.alpha_format={value}"]

    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=SET_HELP)
    parser.add_argument("--texture-format", action=TextureFormat, choices=TEXTURE_FORMATS,
                        help="store every colour texture in this format (default: each preset's, "
                             "`tilesim presets -v` says which)")


def parse_sets(texts) -> list[tuple[str, str]]:
    from pipelines.presets.keys import parse_set
    return [parse_set(t) for t in texts or ()]


def presets_from_args(spec: str, sets_text, allow_all: bool = True) -> list:
    """The presets a comma-separated --preset names (`all`: every built-in), each with --set
    applied; PresetError (one line) on a bad name, file, key or value."""
    from pipelines.presets import PRESETS
    from pipelines.presets.files import resolve
    sets = parse_sets(sets_text)
    names = [n for part in spec.split(",") if (n := part.strip())]
    if allow_all and names == ["all"]:
        names = list(PRESETS)
    return [resolve(n, sets) for n in names]


def user_lines(presets) -> list[str]:
    """'preset: key = value (user: source)' for every parameter a user set, preset by preset."""
    from pipelines.presets.keys import all_keys, format_value
    by_field = {(k.record, k.field): k for k in all_keys().values()}
    lines = []
    for p in presets:
        for record_name, record in p.records():
            for field, param in record.items():
                if param.label == "user":
                    key = by_field.get((record_name, field))
                    shown = format_value(key, param.value) if key else param.value
                    lines.append(f"{p.name}: {key.name if key else field} = {shown} (user: {param.source})")
    return lines
