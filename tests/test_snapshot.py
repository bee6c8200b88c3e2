"""Every counter, image and heat map of every built-in scene x preset x 1x/4x (and the ray passes
on every preset) held bit-identical to tests/golden/snapshot.json (tests/snapshot.py). A
restructuring keeps them; a change of figures rewrites the file with --update-snapshot in a
commit that says which moved and why."""
from __future__ import annotations

import pytest

from tests import snapshot as S


def test_snapshot(request):
    got = {S.case_id(*case): S.digest(*S.frame_outputs(*case)) for case in S.cases()}
    if request.config.getoption("--update-snapshot"):
        S.save(got)
        pytest.skip(f"rewrote {S.PATH.name} ({len(got)} cases)")
    stored = S.load()
    assert stored, f"no {S.PATH}: run pytest --update-snapshot on purpose"
    assert (stored["width"], stored["height"]) == (S.WIDTH, S.HEIGHT)
    want = stored["cases"]
    assert sorted(got) == sorted(want), "the grid of cases changed: regenerate on purpose"
    moved = [f"{case}: {k}" for case in want for k in sorted(set(want[case]) | set(got[case]))
             if want[case].get(k) != got[case].get(k)]
    assert not moved, (f"{len(moved)} digests moved (python tests/snapshot.py CASE prints a "
                       "case's counters):\n" + "\n".join(moved[:40]))
