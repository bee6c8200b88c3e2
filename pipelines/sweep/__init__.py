"""`tilesim sweep`: scenes x presets x parameter grids x resolutions x samples, one frame per
cell, on Dask distributed (DESIGN.md §8).

    spec       the TOML spec -> Sweep (its cells), every preset checked before any work
    cell       one cell on a worker -> one flat row (counters, derived figures, timings)
    runner     the cells on a LocalCluster, an existing cluster, or serially; resume
    results    the rows -> Parquet + CSV, the journal an interrupted sweep resumes from
    plot       a results file -> line plots and heat maps (matplotlib)

The CLI face is pipelines.commands.sweep.
"""
