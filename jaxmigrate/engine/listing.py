"""The files of a project's walk, kept in the cache for as long as nothing the walk looked at
changed (a warm ``check`` of one file in a large project walked it every time).

The walk (engine/discovery.py) records what it looked at (``Seen``): each folder it listed, with
its stat taken before the listing (a file added, removed or renamed there changes the folder's
modification and inode change times), the ``.gitignore`` and ``pyproject.toml`` files that decide
what it skips, and the folders above it whose ignore rules, checkout top and configuration apply.
A later run stats each of those paths, about one per folder, instead of listing every folder and
asking its exclusions again; one that differs, or was modified less than 2 s before the walk (the
clock tick a change may share with it, as the file cache guards against), walks again. The key is
the folders walked, the working directory (the displays are relative to it) and the exclusion
options of the command line and of ``--config``.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import List, Optional, Sequence, Tuple

from jaxmigrate.engine.cache import RACY_NS, Cache, stat_of
from jaxmigrate.engine.discovery import Seen, walk_files


def walk_files_cached(folders: Sequence[str], cache: Optional[Cache], *, exclude: Optional[Sequence[str]] = None,
                      extend_exclude: Sequence[str] = (), configs=None) -> List[Tuple[str, str]]:
    """``walk_files``' answer, from the cache when nothing it looked at changed."""
    if cache is None:
        return walk_files(folders, exclude=exclude, extend_exclude=extend_exclude, configs=configs)
    settings = repr((tuple(folders), os.getcwd(), exclude, tuple(extend_exclude),
                     getattr(configs, "explicit", None))).encode()
    key = "walk:" + hashlib.blake2b(settings, digest_size=16).hexdigest()
    known = cache.facts.get(key)
    if known is not None and _unchanged(known):
        paths, displays = known[2], known[3].split("\n") if known[3] else []
        if paths is None:  # each path is the working directory's and its display
            prefix = os.path.join(os.getcwd(), "")
            return [(prefix + d, d) for d in displays]
        return list(zip(paths.split("\n"), displays)) if displays else []
    seen = Seen()
    start = time.time_ns()
    files = walk_files(folders, exclude=exclude, extend_exclude=extend_exclude, configs=configs, seen=seen)
    if all(st is None or st[0] < start - RACY_NS for st in seen.stats.values()):
        prefix = os.path.join(os.getcwd(), "")
        below = all(path == prefix + display for path, display in files)
        cache.facts[key] = (tuple(seen.stats), tuple(seen.stats.values()),
                            None if below else "\n".join(f[0] for f in files), "\n".join(f[1] for f in files))
        cache.dirty = True
    return files


def _unchanged(known) -> bool:
    try:
        for path, stat in zip(known[0], known[1]):
            try:
                st = os.stat(path)
            except OSError:
                if stat is not None:
                    return False
                continue
            if stat is None or stat_of(st) != tuple(stat):
                return False
    except (TypeError, IndexError, ValueError):
        return False
    return True
