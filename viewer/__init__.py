"""tilesim view: the same scene through several architectures side by side, with heat maps and
live counters (DESIGN.md §1: the layer above pipelines; nothing below imports it).

    tilesim view sponza --preset imr-baseline,amd-rdna2,apple-m3
    tilesim view dragon --preset amd-rdna3,amd-rdna4 --rays primary,shadow,ao

Modules, pure ones first (testable without a GL context):

- `camera`: orbit / pan / zoom / fly as functions Camera -> Camera (scenes.model.Camera)
- `layout`: panel, title, strip and footer rectangles for 1 to 4 panels
- `modes`: image, overdraw, DRAM bytes per tile, tile fallbacks, depth -> RGBA on one shared scale
- `keys`: key -> action table and the on-screen help
- `schedule`: the render worker thread (latest request wins) and the reduced/full resolution
  policy; a full frame runs the panel's ray passes too (pipelines.frame.run, BVHs kept across moves);
  while the camera moves in image mode, pictures at full resolution (pipelines.picture) with the
  costs of a recent camera, which a thread of their own renders whole behind them
- `hud`: titles, counter strips with differences to the first panel, footer legend, screenshot JSON
- `app`: the moderngl-window WindowConfig that uploads the panels as textures and draws quads
- `cli`: `add_parser(subparsers)` registers `tilesim view`; imports nothing heavy

    from viewer.app import Options, open_viewer
    from pipelines.presets import get_preset
    v = open_viewer(Options(["sponza"], [get_preset("imr-baseline"), get_preset("apple-m3")]),
                    window="headless")
    v.wait_full(); v.save_screenshot("view.png")     # + view.json with every panel's counters
"""
