"""The real legacy trees of the side-by-side benchmark, materialised from local bare git mirrors.

    python bench/trees.py                                # all five, under the bench cache folder
    python bench/trees.py jax041 easylm --out /tmp/trees
    python bench/trees.py --mirror-root /srv/mirrors     # OWNER+NAME/repo under this folder
    python bench/trees.py --jax041 /srv/jax.git          # one tree's repository

Each tree is one repository at one commit, pinned here by its full sha (a tag or ``X^`` is written
beside it only to say where the sha came from). Only source files are written: ``*.py``,
``*.ipynb``, ``pyproject.toml`` and ``setup.cfg``, read with ``git ls-tree`` and ``git cat-file``
(no network, no work tree, no checkout). A blob the mirror lacks (mirrors may leave out large
blobs) is skipped and counted. A tree already materialised at its sha (the marker file
``.bench-tree`` holds it) is left as it is; any other folder in its place is replaced.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

MARKER = ".bench-tree"
SOURCE_SUFFIXES = (".py", ".ipynb")
SOURCE_NAMES = ("pyproject.toml", "setup.cfg")


@dataclass(frozen=True)
class Tree:
    name: str
    repo: str  # owner/name on GitHub: the mirror is MIRROR_ROOT/owner+name/repo
    sha: str
    origin: str  # what the sha was resolved from, for people

    @property
    def mirror_name(self) -> str:
        return self.repo.replace("/", "+")


TREES: Dict[str, Tree] = {t.name: t for t in (
    Tree("jax041", "jax-ml/jax", "c4d590b1b640cc9fcfdbe91bf3fe34c47bcde917", "tag jax-v0.4.1, whole tree"),
    Tree("easylm", "young-geng/EasyLM", "9757be87571e714da83f9311531c81db47953f63", "9e466cf^"),
    Tree("maxtext", "google/maxtext", "736b1f3788da73c6b1646f2149be22bf5b31344f", "d69c5c5^"),
    Tree("mtj", "kingoflolz/mesh-transformer-jax", "f8315e3003033b23f21d78361b288953064e0e76", "HEAD of the mirror"),
    Tree("colabfold", "sokrypton/ColabFold", "3b808f0fa70ac160747eedf862b2da3be9dbcbce", "HEAD of the mirror"),
)}


def default_mirror_root() -> Path:
    return Path(os.environ.get("JAXMIGRATE_BENCH_MIRRORS", "/work/.mirror"))


def default_cache() -> Path:
    """The bench's cache folder: ``$JAXMIGRATE_BENCH_CACHE``, else ``jaxmigrate-bench`` in the temp folder."""
    return Path(os.environ.get("JAXMIGRATE_BENCH_CACHE") or Path(tempfile.gettempdir()) / "jaxmigrate-bench")


def is_source(path: str) -> bool:
    base = path.rsplit("/", 1)[-1]
    return base.endswith(SOURCE_SUFFIXES) or base in SOURCE_NAMES


def source_blobs(gitdir: Path, sha: str) -> List[Tuple[str, str]]:
    """(blob sha, path) of every source file of commit ``sha``; symlinks and submodules left out."""
    listing = subprocess.run(["git", "--git-dir", str(gitdir), "ls-tree", "-r", "-z", "--full-tree", sha],
                             check=True, capture_output=True).stdout
    blobs = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, blob = meta.split()
        name = os.fsdecode(path)
        if kind == b"blob" and mode != b"120000" and is_source(name):
            blobs.append((blob.decode(), name))
    return blobs


def read_blobs(gitdir: Path, shas: List[str]) -> Dict[str, Optional[bytes]]:
    """Each blob's bytes through one ``git cat-file --batch``; None for a blob the repository lacks."""
    unique = list(dict.fromkeys(shas))
    proc = subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "--batch"],
                          input="".join(f"{s}\n" for s in unique).encode(), check=True, capture_output=True)
    out, pos, found = proc.stdout, 0, {}
    for sha in unique:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) == 2 and header[1] == b"missing":
            found[sha] = None
            continue
        size = int(header[2])
        found[sha] = out[pos:pos + size]
        pos += size + 1  # the content is followed by a newline
    return found


def resolve(gitdir: Path, sha: str) -> str:
    """The commit ``sha`` names in ``gitdir`` (an error naming the repository if it has no such commit)."""
    proc = subprocess.run(["git", "--git-dir", str(gitdir), "rev-parse", "--verify", "-q", f"{sha}^{{commit}}"],
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{gitdir}: no commit {sha} (is this the right mirror?)")
    return proc.stdout.strip()


def materialise(gitdir: Path, sha: str, out: Path) -> Dict[str, object]:
    """Write the source files of ``sha`` under ``out`` unless ``out`` already holds them (its marker
    names ``sha``). Returns what was done: ``skipped`` (already there), ``files``, ``missing``."""
    marker = out / MARKER
    if marker.is_file() and marker.read_text().split() == [sha]:
        return {"path": str(out), "skipped": True, "files": None, "missing": None}
    commit = resolve(gitdir, sha)
    blobs = source_blobs(gitdir, commit)
    contents = read_blobs(gitdir, [b for b, _ in blobs])
    part = out.with_name(out.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    written, missing = 0, 0
    for blob, path in blobs:
        data = contents[blob]
        if data is None:
            missing += 1
            continue
        target = part / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += 1
    part.mkdir(parents=True, exist_ok=True)
    (part / MARKER).write_text(sha + "\n")
    shutil.rmtree(out, ignore_errors=True)
    part.rename(out)
    return {"path": str(out), "skipped": False, "files": written, "missing": missing}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The mirror options, shared with ``bench/run.py --real``."""
    parser.add_argument("--mirror-root", type=Path, default=None,
                        help="folder of the mirrors, OWNER+NAME/repo each (default $JAXMIGRATE_BENCH_MIRRORS "
                             "or /work/.mirror)")
    for tree in TREES.values():
        parser.add_argument(f"--{tree.name}", dest=f"mirror_{tree.name}", type=Path, metavar="GITDIR",
                            help=f"the bare repository of {tree.repo} (default MIRROR_ROOT/{tree.mirror_name}/repo)")


def mirror_of(tree: Tree, args: argparse.Namespace) -> Path:
    given = getattr(args, f"mirror_{tree.name}", None)
    if given is not None:
        return Path(given)
    return Path(args.mirror_root or default_mirror_root()) / tree.mirror_name / "repo"


def materialise_all(names: List[str], out_root: Path, args: argparse.Namespace, log=print) -> List[Path]:
    """Every named tree under ``out_root/NAME``; the paths, in the order asked."""
    paths = []
    for name in names:
        tree = TREES[name]
        done = materialise(mirror_of(tree, args), tree.sha, out_root / name)
        if not done["skipped"]:
            absent = f", {done['missing']} absent from the mirror (skipped)" if done["missing"] else ""
            log(f"{name}: {tree.repo} at {tree.sha[:12]} ({tree.origin}): {done['files']} files{absent}")
        paths.append(out_root / name)
    return paths


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"trees to write (default all: {', '.join(TREES)})")
    parser.add_argument("--out", type=Path, default=None, help="folder for the trees (default CACHE/trees)")
    add_arguments(parser)
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in TREES]
    if unknown:
        parser.error(f"no tree {', '.join(unknown)} (known: {', '.join(TREES)})")
    out = args.out or default_cache() / "trees"
    for path in materialise_all(args.names or list(TREES), out, args):
        print(path)


if __name__ == "__main__":
    main()
