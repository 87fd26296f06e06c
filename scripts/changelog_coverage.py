"""How jaxmigrate covers every breaking change and deprecation in JAX's changelog.

    python scripts/changelog_coverage.py                  # render docs/changelog-coverage.md from the data
    python scripts/changelog_coverage.py --check GITDIR   # also: the data covers every bullet of the CHANGELOG
    python scripts/changelog_coverage.py --missing GITDIR # print a TOML stub for each bullet the data lacks

The data is ``docs/changelog-coverage.toml``, written by hand: one ``[[bullet]]`` per bullet of JAX's
CHANGELOG.md (at the tag the data names in ``[source]``) under a "Breaking changes", "Deprecations"
or "Deletions" heading (the spellings vary over the file: ``* Breaking Changes``, ``* Deprecations &
Removals``, ``* Deprecations/removals:``, ``* Deletion:`` ...), top-level and nested, of every jax and
jaxlib release from 0.4.1 on. The ``## Unreleased`` heading at the tag holds the tag's own release.

JAX's text is not copied: a bullet is identified by its release, its section and a fingerprint (the
first 12 hex digits of the sha1 of its own text, whitespace collapsed, nested bullets left out), and
described in the data's own words. Rendering reads only the data; ``--check`` needs a clone of
jax-ml/jax (a bare one will do) to read the CHANGELOG with ``git show TAG:CHANGELOG.md``.

Coverage kinds (``coverage =``):
  - ``rule``: ``codes`` (rule codes) and ``fixtures`` (fixture case folders) that show it;
  - ``names``: ``removed`` / ``deprecated`` qualified names that the API history
    (jaxmigrate/catalog/data/*.tsv) records as removed / deprecated in the bullet's release, or in
    the release written after ``@`` (``jax.x@0.4.15``) where the history dates it otherwise; JM801,
    JM802 and JM803 report them;
  - ``calls``: ``calls`` (what changed in a signature), for the signature history (JM804);
  - ``gap``: a change of behaviour visible in source that no rule covers yet; ``look_for`` says what a
    rule would look for (``to_check = true``: a first classification not yet confirmed);
  - ``invisible``: not visible in source; ``why`` says why.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "changelog-coverage.toml"
DOC = ROOT / "docs" / "changelog-coverage.md"

#: a bullet whose text (trailing colon left out, case folded) is one of these opens a section
SECTIONS = {
    "breaking changes": "Breaking changes",
    "deprecations": "Deprecations",
    "deprecations & removals": "Deprecations",
    "deprecations/removals": "Deprecations",
    "deletion": "Deletions",
    "deletions": "Deletions",
}
#: section titles that close one (any other short heading-like bullet does not: it is an item)
OTHER_SECTIONS = {"changes", "new features", "new functionality", "bug fixes"}
#: rule codes the data may name before the rule exists ("calls" coverage is JM804's, which exists now);
#: add a code here while its rule is built, remove it once jaxmigrate.rules has it
PENDING_CODES: tuple = ()
KINDS = ("rule", "names", "calls", "gap", "invisible")
SHOWN_NAMES = 8  # names listed per bullet in the document; the data (and the test) has them all
KIND_TITLES = {
    "rule": "rule and fixture",
    "names": "names: API history",
    "calls": "calls: signature history (JM804)",
    "gap": "behaviour: gap",
    "invisible": "not visible in source",
}

_RELEASE = re.compile(r"^## (jax|JAX|jaxlib)\s+v?(\d+(?:\.\d+)+)\b")
_UNRELEASED = re.compile(r"^## Unreleased\b")
_BULLET = re.compile(r"^(\s*)[*-]\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def version_key(text: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def fingerprint(text: str) -> str:
    """The first 12 hex digits of the sha1 of ``text`` with its whitespace collapsed."""
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Bullet:
    """One bullet of the CHANGELOG: where it is and its fingerprint (its text stays in memory only)."""

    release: str  # "jax 0.4.14", "jaxlib 0.4.14"
    section: str  # "Breaking changes", "Deprecations", "Deletions"
    id: str
    depth: int  # 0: directly under the section heading
    text: str

    @property
    def key(self) -> Tuple[str, str, str]:
        return (self.release, self.section, self.id)


def parse_changelog(text: str, tag_version: str, first: str = "0.4.1") -> List[Bullet]:
    """Every bullet under a breaking-change, deprecation or deletion heading of every release from
    ``first`` on, in file order. ``## Unreleased`` is read as the release ``tag_version``."""
    out: List[Bullet] = []
    release: Optional[str] = None
    section: Optional[str] = None
    section_indent = 0
    stack: List[Tuple[int, List[str], int]] = []  # open bullets: (indent, lines, index in out)
    in_fence = False

    def close_bullets(indent: int) -> None:
        while stack and stack[-1][0] >= indent:
            _, lines, index = stack.pop()
            old = out[index]
            out[index] = Bullet(old.release, old.section, fingerprint("\n".join(lines)), old.depth, "\n".join(lines))

    for line in text.splitlines():
        if not in_fence and line.startswith("## "):
            close_bullets(0)
            section = None
            m = _RELEASE.match(line)
            if m:
                package = "jaxlib" if m.group(1) == "jaxlib" else "jax"
                version = m.group(2)
                release = f"{package} {version}" if version_key(version) >= version_key(first) else None
            elif _UNRELEASED.match(line):
                release = f"jax {tag_version}"
            else:
                release = None
            continue
        if release is None:
            continue
        if _FENCE.match(line):
            in_fence = not in_fence
            if stack:
                stack[-1][1].append(line)
            continue
        m = _BULLET.match(line) if not in_fence else None
        if m:
            indent = len(m.group(1).expandtabs())
            title = m.group(2).strip().rstrip(":").strip().lower()
            if section is not None and indent <= section_indent:
                close_bullets(0)
                section = None
            if section is None:
                if title in SECTIONS:
                    section, section_indent = SECTIONS[title], indent
                continue
            if title in SECTIONS or title in OTHER_SECTIONS:  # a heading nested deeper than the section's
                close_bullets(0)
                section = SECTIONS.get(title)
                section_indent = indent
                continue
            close_bullets(indent)
            out.append(Bullet(release, section, "", len(stack), ""))
            stack.append((indent, [m.group(2)], len(out) - 1))
            continue
        if stack:
            stack[-1][1].append(line)
    close_bullets(0)
    return out


def read_changelog(git_dir: Path, tag: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{tag}:CHANGELOG.md"],
                          check=True, capture_output=True, text=True).stdout


# the data ---------------------------------------------------------------------------------------

def load(path: Path = DATA) -> Dict[str, Any]:
    with path.open("rb") as f:
        return tomllib.load(f)


def tag_version(tag: str) -> str:
    return tag.rsplit("-v", 1)[-1]


def bullets_of(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    return list(data.get("bullet", []))


def name_versions(entry: Dict[str, Any], state: str) -> List[Tuple[str, str]]:
    """``(qualname, version)`` of each name the entry lists as ``state`` (removed or deprecated)."""
    default = entry["release"].split()[-1]
    out = []
    for item in entry.get(state, []):
        name, _, version = item.partition("@")
        out.append((name, version or default))
    return out


def check_complete(data: Dict[str, Any], bullets: Sequence[Bullet]) -> List[str]:
    """Differences between the data's bullets and the CHANGELOG's, as messages (none: complete)."""
    problems: List[str] = []
    have = [(b["release"], b["section"], b["id"]) for b in bullets_of(data)]
    want = [b.key for b in bullets]
    # a bullet may repeat in one section (0.4.16 says twice that `jax.linear_util` is deprecated): as many times
    for key in sorted((Counter(want) - Counter(have)).elements()):
        problems.append(f"not in the data: {' / '.join(key)}")
    for key in sorted((Counter(have) - Counter(want)).elements()):
        problems.append(f"not in the CHANGELOG: {' / '.join(key)}")
    if not problems and have != want:
        problems.append("the data's bullets are not in the CHANGELOG's order")
    if data["source"]["bullets"] != len(want):
        problems.append(f"[source] bullets = {data['source']['bullets']}, the CHANGELOG has {len(want)}")
    return problems


def check_entries(data: Dict[str, Any], known_codes: Sequence[str]) -> List[str]:
    """Problems of the data on its own (no CHANGELOG needed): a kind without its fields, a rule code not in
    ``known_codes``, a fixture folder that does not exist, a name the API history does not date as stated."""
    sys.path.insert(0, str(ROOT))
    from jaxmigrate.catalog import api_history

    problems: List[str] = []
    for e in bullets_of(data):
        where = f"{e.get('release')} / {e.get('section')} / {e.get('id')}"
        kind = e.get("coverage")
        if not re.fullmatch(r"(jax|jaxlib) \d+(\.\d+)+", str(e.get("release"))) or e.get("section") not in SECTIONS.values():
            problems.append(f"{where}: release or section malformed")
        if not re.fullmatch(r"[0-9a-f]{12}", str(e.get("id"))) or not str(e.get("what", "")).strip():
            problems.append(f"{where}: id or description missing")
        if kind not in KINDS:
            problems.append(f"{where}: coverage {kind!r} is none of {', '.join(KINDS)}")
            continue
        required = {"rule": ("codes", "fixtures"), "calls": ("calls",), "gap": ("look_for",), "invisible": ("why",)}
        for field in required.get(kind, ()):
            if not e.get(field):
                problems.append(f"{where}: coverage {kind} without {field}")
        for code in e.get("codes", []):
            if code not in known_codes:
                problems.append(f"{where}: no rule {code}")
        for fixture in e.get("fixtures", []):
            if not (ROOT / fixture / "before.py").is_file():
                problems.append(f"{where}: no fixture {fixture}")
        if kind == "names" and not (e.get("removed") or e.get("deprecated")):
            problems.append(f"{where}: coverage names without a name")
        for state in ("removed", "deprecated"):
            for name, version in name_versions(e, state):
                history = api_history.table(api_history.is_private(name))
                found = history.entry(name)
                if found is None:
                    problems.append(f"{where}: {name} is not in the API history")
                    continue
                if state == "removed":
                    dates = [history.versions[end] for _, end in found.intervals if end != -1]
                else:
                    dates = [history.versions[found.deprecated]] if found.deprecated != -1 else []
                if version not in dates:
                    problems.append(f"{where}: the history has {name} {state} in {dates or 'no release'}, not {version}")
    return problems


def copied_runs(text: str, bullets: Sequence[Bullet], words: int = 8) -> List[str]:
    """Runs of ``words`` consecutive words of a bullet that ``text`` repeats (JAX's text must not be copied)."""
    haystack = " " + " ".join(text.split()) + " "
    found: List[str] = []
    for b in bullets:
        parts = b.text.split()
        for i in range(len(parts) - words + 1):
            run = " ".join(parts[i:i + words])
            if f" {run} " in haystack:
                found.append(f"{b.release} / {b.section} / {b.id}: {run}")
                break
    return found


def stub(bullet: Bullet) -> str:
    """A TOML entry to fill in for a bullet the data lacks (no text of the bullet in it)."""
    return (f'[[bullet]]\nrelease = "{bullet.release}"\nsection = "{bullet.section}"\nid = "{bullet.id}"\n'
            f'depth = {bullet.depth}\nwhat = ""\ncoverage = ""\n')


# the document -----------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def coverage_text(entry: Dict[str, Any]) -> str:
    kind = entry["coverage"]
    parts: List[str] = []
    if kind == "rule" or entry.get("codes"):
        codes = ", ".join(entry.get("codes", []))
        fixtures = ", ".join(f"`{f}`" for f in entry.get("fixtures", []))
        parts.append(f"{codes} ({fixtures})" if fixtures else codes)
    if kind == "names":
        release = entry["release"].split()[-1]
        for state in ("removed", "deprecated"):
            pairs = name_versions(entry, state)
            if pairs:
                shown = [f"`{n}`" + (f" ({v})" if v != release else "") for n, v in pairs[:SHOWN_NAMES]]
                more = f" and {len(pairs) - SHOWN_NAMES} more (in the data)" if len(pairs) > SHOWN_NAMES else ""
                parts.append(f"names: API history, {state}: " + ", ".join(shown) + more)
    if kind == "calls":
        parts.append("calls: signature history (JM804): " + "; ".join(entry.get("calls", [])))
    if kind == "gap":
        parts.append(("behaviour: gap (to check)" if entry.get("to_check") else "behaviour: gap")
                     + f": a rule would look for {entry['look_for']}")
    if kind == "invisible":
        parts.append(f"not visible in source: {entry['why']}")
    if entry.get("note"):
        parts.append(entry["note"])
    return _cell("; ".join(parts))


def render(data: Dict[str, Any]) -> str:
    source = data["source"]
    entries = bullets_of(data)
    counts = {k: sum(1 for e in entries if e["coverage"] == k) for k in KINDS}
    to_check = sum(1 for e in entries if e.get("to_check"))
    lines = [
        "# JAX's changelog, covered",
        "",
        "<!-- generated by scripts/changelog_coverage.py from docs/changelog-coverage.toml: edit the data, "
        "then run `python scripts/changelog_coverage.py` -->",
        "",
        f"Every bullet under a breaking-change, deprecation or deletion heading of JAX's CHANGELOG.md at "
        f"`{source['tag']}`, for every jax and jaxlib release from {source['first']} on: "
        f"**{len(entries)} bullets** (nested bullets counted on their own), each with what jaxmigrate does "
        "about it. The descriptions are ours, not JAX's text; a bullet is identified by its release, its "
        "section and a fingerprint of its text (`id`, see `scripts/changelog_coverage.py`). "
        f"`python scripts/changelog_coverage.py --check JAX_GITDIR` checks that these are exactly the "
        f"{source['bullets']} bullets of the CHANGELOG at `{source['tag']}` (the `## Unreleased` heading "
        f"there is release {tag_version(source['tag'])}); `tests/test_changelog_coverage.py` checks every "
        "rule code, fixture and API-history fact named here.",
        "",
        "| coverage | bullets |",
        "|---|---:|",
    ]
    for kind in KINDS:
        extra = f" ({to_check} of them to check)" if kind == "gap" and to_check else ""
        lines.append(f"| {KIND_TITLES[kind]}{extra} | {counts[kind]} |")
    lines.append(f"| total | {len(entries)} |")
    lines += [
        "",
        "- **rule and fixture**: a rule reports (and where it can, fixes) it; the fixture shows it.",
        "- **names: API history**: JM801 (removed public names), JM802 (deprecated public names) and JM803 "
        "(removed private names) report every reference to the names, at the release the history dates "
        "(given in brackets where it differs from the bullet's release); see [api-history.md](api-history.md).",
        "- **calls: signature history (JM804)**: a call passing an argument the target's signature no longer "
        "takes.",
        "- **behaviour: gap**: visible in source, no rule yet; listed first below: these are the next rules.",
        "- **not visible in source**: packaging, platforms, performance, messages, internals.",
        "",
        "## Behaviour gaps: the next rules",
        "",
        "| release | section | change | a rule would look for |",
        "|---|---|---|---|",
    ]
    for e in entries:
        if e["coverage"] == "gap":
            mark = " (to check)" if e.get("to_check") else ""
            lines.append(f"| {e['release']} | {e['section']} | {_cell(e['what'])}{mark} | {_cell(e['look_for'])} |")
    lines.append("")
    releases: List[str] = []
    for e in entries:
        if e["release"] not in releases:
            releases.append(e["release"])
    for release in releases:
        lines += [f"## {release}", "", "| section | id | change | coverage |", "|---|---|---|---|"]
        for e in entries:
            if e["release"] == release:
                indent = "↳ " * e.get("depth", 0)
                lines.append(f"| {e['section']} | `{e['id']}` | {indent}{_cell(e['what'])} | {coverage_text(e)} |")
        lines.append("")
    return "\n".join(lines)


def known_codes() -> List[str]:
    """The rule codes the data may name: every rule's, plus those of rules being built (``PENDING_CODES``)."""
    sys.path.insert(0, str(ROOT))
    from jaxmigrate.rules import BY_CODE

    return sorted(set(BY_CODE) | set(PENDING_CODES))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", metavar="GITDIR", type=Path, help="check the data against the CHANGELOG at its tag")
    parser.add_argument("--missing", metavar="GITDIR", type=Path, help="print a stub for each bullet the data lacks")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=DOC)
    args = parser.parse_args(argv)
    data = load(args.data)
    source = data["source"]
    git_dir = args.check or args.missing
    if git_dir is not None:
        bullets = parse_changelog(read_changelog(git_dir, source["tag"]), tag_version(source["tag"]), source["first"])
        if args.missing is not None:
            have = {(b["release"], b["section"], b["id"]) for b in bullets_of(data)}
            for b in bullets:
                if b.key not in have:
                    print(stub(b))
            return 0
        problems = check_complete(data, bullets) + check_entries(data, known_codes())
        problems += [f"copied from the CHANGELOG: {p}" for p in copied_runs(args.data.read_text(), bullets)]
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            return 1
        print(f"complete: {len(bullets)} bullets of {source['tag']}")
    args.out.write_text(render(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
