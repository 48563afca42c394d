"""A file read back with music21 as the tests need it: never from music21's pickle cache, nor into it.

``music21.converter.parse`` loads a pickled copy of a file it parsed before from its scratch folder (by default
``/tmp/music21``, which anyone may write to) and stores one there; a planted pickle would run as the tester.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def parsed(path: Path) -> Any:
    """The score in *path*, parsed from the file itself, nothing kept."""
    import music21

    return music21.converter.parse(path, forceSource=True, storePickle=False)
