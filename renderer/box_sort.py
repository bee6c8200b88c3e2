"""The order a BVH box node's children are visited in, as AMD's ray-tracing driver picks it per
ray: the sort keys of GPURT's BoxSortHeuristic (gpurt/gpurt.h; src/shaders/IntersectCommon.hlsl,
IntersectNodeBvh4 and GetBoxSortingHeuristicFromRayFlags). Kept apart from renderer.bvh, whose
import builds the tracer, so that the preset keys can name the policies.

    nearest first       the child's entry distance
    largest first       its entry minus its exit (the exit clamped to the ray's extent): the
                        longest stretch of ray inside first, for rays that end at their first hit
    lowest midpoint     its entry plus its exit before clamping (the halving left out)

A policy gives the order for rays that end at their first hit accepted
(ACCEPT_FIRST_HIT_AND_END_SEARCH: shadow and AO rays) and the order for the rest. GPURT takes
largest first only where every ray of the wave ends at its first hit; the model decides per
ray, as GPURT's C++ path does.
"""
from __future__ import annotations

SORT_CLOSEST, SORT_LARGEST, SORT_MIDPOINT = 0, 1, 2
ORDER_NAMES = {SORT_CLOSEST: "nearest", SORT_LARGEST: "largest", SORT_MIDPOINT: "midpoint"}

# policy -> (order of first-hit rays, order of the rest); GPURT's Closest, MidPoint,
# LargestFirstOrClosest, LargestFirstOrClosestMidPoint
BOX_SORTS = {
    "closest": (SORT_CLOSEST, SORT_CLOSEST),
    "midpoint": (SORT_MIDPOINT, SORT_MIDPOINT),
    "largest-or-closest": (SORT_LARGEST, SORT_CLOSEST),
    "largest-or-midpoint": (SORT_LARGEST, SORT_MIDPOINT),
}


def sort_of(box_sort: str, any_hit: bool) -> int:
    """The SORT_* order a ray walks under policy `box_sort`: any_hit for a ray that ends at
    its first hit accepted."""
    if box_sort not in BOX_SORTS:
        raise ValueError(f"unknown box sort {box_sort!r} (try: {', '.join(BOX_SORTS)})")
    return BOX_SORTS[box_sort][0 if any_hit else 1]
