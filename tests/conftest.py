import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/*.png from the current renderer (on purpose only)")
    parser.addoption("--update-snapshot", action="store_true",
                     help="rewrite tests/golden/snapshot.json (every counter, image and heat map "
                          "digest) from the current code: only in a commit that says which figures "
                          "moved and why")
