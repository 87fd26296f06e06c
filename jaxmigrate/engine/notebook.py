"""Jupyter notebooks: their code cells are checked and fixed as one module; nothing else changes.

The code cells are joined into one module (so an import in one cell resolves names in the next),
each preceded by a marker comment; IPython magics (`%time`, `!pip`, `x?`) become placeholder
statements and cell magics (`%%bash`) leave their cell out. The markers and placeholders carry a
tag that no code cell contains (`jaxmigrate`, else `jaxmigrate1`, ...), so no cell's text can be
taken for one. After fixing, the module is split back at the markers, and each cell whose part
of it changed has its `source` value replaced in the file's own JSON text: a small scanner finds
the span of each cell's `source` (a string or a list of strings), and the new value is written in
the style of the old (a list of lines or one string, the list's layout, `\\uXXXX` escapes in an
ASCII file), each unchanged line keeping its original spelling and line ending. Every byte outside
the changed lines stays as it was: outputs, metadata, key order, duplicate keys, number spellings,
indentation, line endings.

nbformat 3 notebooks (cells under `worksheets`) are not supported: ``load`` raises
``Unsupported``, and every one is reported so (the pipeline reads a notebook that holds
``"worksheets"`` whatever the prefilter says of its code cells).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from jaxmigrate.engine.source import decode

# a line magic, a shell escape, `x?` help, or an assignment from one (`files = !ls`, `p = %env PATH`)
_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:[%!?]|[\w.]+\?{1,2}[ \t]*$|[\w.]+[ \t]*=[ \t]*[%!])")
#: a line magic written without `%` (IPython's automagic, on by default): `timeit f(x)`
_AUTOMAGIC = re.compile(r"^(?P<indent>[ \t]*)(?P<word>[A-Za-z_]\w*)[ \t]+[\w\-'\"]")
_AUTOMAGIC_WORDS = frozenset((
    "alias", "autoreload", "cd", "conda", "config", "debug", "env", "history", "load_ext", "ls", "matplotlib",
    "pdb", "pip", "popd", "precision", "prun", "pushd", "pwd", "pylab", "reload_ext", "reset", "run", "set_env",
    "store", "time", "timeit", "who", "whos", "xmode",
))


class Unsupported(ValueError):
    """A notebook in a format the tool does not read (nbformat 3); ``code``: its code cells, for
    the prefilter."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Notebook:
    text: str  # the file's JSON text
    data: Dict[str, Any]
    tag: str  # in every marker and placeholder; in no code cell
    cells: List[int] = field(default_factory=list)  # indices of the cells joined into the module
    starts: List[int] = field(default_factory=list)  # 1-based module line of each cell's first line
    parts: Dict[int, str] = field(default_factory=dict)  # cell index -> its lines in the module
    magics: List[str] = field(default_factory=list)
    # cell index -> the indentation IPython strips from a cell whose first line is indented
    dedents: Dict[int, str] = field(default_factory=dict)

    def locate(self, module_line: int) -> Tuple[int, int]:
        """(cell number, 1-based; line in that cell) of a module line."""
        k = max((i for i, start in enumerate(self.starts) if start <= module_line), default=0)
        return self.cells[k] + 1, module_line - self.starts[k] + 1

    def marker(self, cell: int) -> str:
        return f"# {self.tag}-cell-{cell}"

    def placeholder(self, indent: str, magic: int) -> str:
        return f"{indent}pass  # {self.tag}-magic-{magic}"

    def parts_of(self, module: str) -> Tuple[str, List[Tuple[int, str, str]]]:
        """A module of this notebook's cells, split at its markers: the text before the first,
        and each cell's index, marker line and part."""
        pieces = re.split(rf"^(# {re.escape(self.tag)}-cell-(\d+)\r?\n)", module, flags=re.MULTILINE)
        return pieces[0], [(int(pieces[k + 1]), pieces[k], pieces[k + 2]) for k in range(1, len(pieces) - 2, 3)]


def _source(cell: Dict[str, Any], index: int) -> str:
    src = cell.get("source", "")
    if isinstance(src, str):
        return src
    try:
        if isinstance(src, list):
            return "".join(src)
    except TypeError:
        pass
    raise ValueError(f"the source of cell {index + 1} is not a string or a list of strings")


def load(text: str) -> Tuple[Notebook, str]:
    """The notebook and the module its code cells make. Raises ``ValueError`` for a file that is
    not a notebook (``json.JSONDecodeError`` for one that is not JSON) and ``Unsupported``."""
    import json  # here: a check of .py files never loads it

    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("the JSON is not an object")
    _supported(data)
    cells = data.get("cells", [])
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        raise ValueError("`cells` is not a list of objects")
    code = {i: _source(cell, i) for i, cell in enumerate(cells) if cell.get("cell_type") == "code"}
    nb = Notebook(text, data, _tag("\n".join(code.values())))
    parts: List[str] = []
    line = 1
    for i, src in code.items():
        if _cell_magic(src):
            continue
        src, nb.dedents[i] = _dedented(src)
        body = []
        continued = None  # the indent of a magic whose line ends with `\`: the next line is part of it
        for raw in src.splitlines():
            m = _MAGIC.match(raw) or _automagic(raw)
            if m or continued is not None:
                indent = m.group("indent") if m else continued
                nb.magics.append(raw)
                body.append(nb.placeholder(indent or "", len(nb.magics) - 1))
                continued = indent if raw.endswith("\\") else None
            else:
                body.append(raw)
        nb.cells.append(i)
        nb.starts.append(line + 1)
        nb.parts[i] = "".join(b + "\n" for b in body)
        chunk = nb.marker(i) + "\n" + nb.parts[i]
        parts.append(chunk)
        line += chunk.count("\n")
    return nb, "".join(parts)


def _automagic(raw: str) -> Optional[re.Match]:
    """``timeit f(x)``: a line that starts with the name of a line magic and a word, and is no
    Python statement on its own (``time = 3`` and ``ls -la`` are)."""
    m = _AUTOMAGIC.match(raw)
    if m is None or m.group("word") not in _AUTOMAGIC_WORDS:
        return None
    try:
        compile(raw.strip(), "<cell>", "exec")
    except SyntaxError:
        return m
    return None


def _supported(data: Dict[str, Any]) -> None:
    """Raises ``Unsupported`` for an nbformat 3 (or older) notebook."""
    version = data.get("nbformat")
    if not (isinstance(version, int) and version < 4 or "worksheets" in data and "cells" not in data):
        return
    code = []
    try:
        for sheet in data.get("worksheets", []):
            for cell in sheet.get("cells", []):
                if cell.get("cell_type") == "code":
                    src = cell.get("input", "")
                    code.append("".join(src) if isinstance(src, list) else str(src))
    except (AttributeError, TypeError):
        pass  # malformed as well: what was read is the prefilter's
    raise Unsupported(f"nbformat {version} (cells under `worksheets`); convert it with "
                      "`jupyter nbconvert --to notebook --nbformat 4`",
                      "".join(c if c.endswith("\n") else c + "\n" for c in code))


def _tag(code: str) -> str:
    """The tag of the markers: ``jaxmigrate``, or with the first number that makes it absent
    from every code cell, so that no line of a cell can pass for a marker or a placeholder."""
    tag, n = "jaxmigrate", 0
    while tag + "-" in code:
        n += 1
        tag = f"jaxmigrate{n}"
    return tag


def _cell_magic(src: str) -> bool:
    """Whether the cell's first line of code is a cell magic (`%%bash`, after `#@title` comments too)."""
    for line in src.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped.startswith("%%")
    return False


def _dedented(src: str) -> Tuple[str, str]:
    """The cell without the indentation of its first line, which IPython strips from each line
    that has it, and that indentation."""
    first = next((line for line in src.splitlines() if line.strip()), "")
    indent = first[: len(first) - len(first.lstrip())]
    if not indent:
        return src, ""
    lines = src.splitlines(keepends=True)
    return "".join(line[len(indent):] if line.startswith(indent) else line for line in lines), indent


def join_cell_imports(nb: Notebook, original: str, module: str) -> str:
    """``module`` (the fixed one) with each changed cell's imports joined and ordered as a
    ``.py`` file's are (``join_written_imports``): a cell is what ruff sorts as a module."""
    from jaxmigrate.analysis.context import FileContext
    from jaxmigrate.analysis.import_layout import imports_in_order, join_written_imports

    _, before = nb.parts_of(original)
    lead, after = nb.parts_of(module)
    if [cell for cell, _, _ in before] != [cell for cell, _, _ in after]:
        return module
    joined = [lead]
    for (_, _, old), (_, marker, new) in zip(before, after):
        if new != old:
            try:
                new = join_written_imports(old, new, imports_in_order(FileContext.of(old)))
            except SyntaxError:  # a cell that is no module alone (a top-level `await`)
                pass
        joined += [marker, new]
    return "".join(joined)


def dump(nb: Notebook, module: str) -> str:
    """The notebook's text with the source of each code cell whose part of the fixed module
    changed replaced, in the notebook's own style; the rest of the text as it was."""
    from jaxmigrate.engine.apply import FixError

    tag = re.escape(nb.tag)
    module = re.sub(rf"^([ \t]*)pass  # {tag}-magic-(\d+)$", lambda m: nb.magics[int(m.group(2))], module,
                    flags=re.MULTILINE)
    lead, cells = nb.parts_of(module)
    new_parts = {cell: part for cell, _, part in cells}
    if sorted(new_parts) != nb.cells:
        raise FixError("a fix moved or removed the boundary between two notebook cells")
    if lead.strip() and new_parts:  # e.g. an import added at the very top goes to the first cell
        first = nb.cells[0]
        new_parts[first] = lead + new_parts[first]
    edits = []
    spans: Optional[Dict[int, Tuple[int, int]]] = None
    for i, part in new_parts.items():
        if part == nb.parts[i]:
            continue
        old = _source(nb.data["cells"][i], i)
        lines = _cell_lines(part, nb.dedents.get(i, ""), old)
        if "".join(lines) == old:
            continue
        if spans is None:
            spans = source_spans(nb.text)
        if i not in spans:  # a code cell without a `source` key, which a fix would give lines
            raise FixError(f"cell {i + 1} has no `source` to write the fix to")
        start, end = spans[i]
        edits.append((start, end, _encoded(nb.text, start, end, lines)))
    out, at = [], 0
    for start, end, value in sorted(edits):
        out += [nb.text[at:start], value]
        at = end
    return "".join(out) + nb.text[at:]


_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what ``str.splitlines`` splits at


def _content(line: str) -> str:
    """A line without its line break."""
    return line.rstrip(_BREAKS) if line[-1:] in _BREAKS else line


def _cell_lines(part: str, dedent: str, old: str) -> List[str]:
    """The cell's new lines (each with its break) from its part of the fixed module: a line the
    cell had keeps its own break, a new one takes the cell's first (``\\n`` if none), and the
    last line has a break only if the cell's last line had one (as Jupyter writes them, an empty
    cell's has none)."""
    old_lines = old.splitlines(keepends=True)
    by_content: Dict[str, str] = {}
    for line in old_lines:
        by_content.setdefault(_content(line), line)
    newline = next((line[len(_content(line)):] for line in old_lines if _content(line) != line), "\n")
    lines = []
    for line in part.splitlines():
        if dedent and line.strip():
            line = dedent + line
        kept = by_content.get(line, line)
        lines.append(kept if kept != line else line + newline)
    if lines:
        if not old_lines or _content(old_lines[-1]) == old_lines[-1]:  # the cell ended without a break
            lines[-1] = _content(lines[-1])
            if not lines[-1]:  # a blank last line: the line before it keeps its break
                lines.pop()
        elif _content(lines[-1]) == lines[-1]:
            lines[-1] += newline
    return lines


# the scanner ---------------------------------------------------------------------------------

_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _scanner() -> Callable[[str, int], Tuple[Any, int]]:
    """``json``'s own scanner (in C): the value at an offset of a text, and where it ends."""
    import json
    from json.scanner import make_scanner

    return make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: the context is a scanner


def _past_space(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]  # a `*` pattern always matches


def source_spans(text: str) -> Dict[int, Tuple[int, int]]:
    """cell index -> the (start, end) offsets in ``text`` of the value of the cell's ``source``,
    of a notebook that ``json.loads`` reads: where a key occurs twice, its last value, the one
    ``json.loads`` keeps."""
    scan = _scanner()
    spans: Dict[int, Tuple[int, int]] = {}

    def skip(start: int) -> int:
        return scan(text, start)[1]

    def cell(index: int, start: int) -> int:
        if text[start] != "{":
            return skip(start)

        def value(key: str, at: int) -> int:
            end = skip(at)
            if key == "source":
                spans[index] = (at, end)
            return end

        spans.pop(index, None)
        return _object(text, start, value, scan)

    def top(key: str, at: int) -> int:
        if key != "cells" or text[at] != "[":
            return skip(at)
        spans.clear()
        return _array(text, at, cell)

    _object(text, _past_space(text, 0), top, scan)
    return spans


def _object(text: str, at: int, value: Callable[[str, int], int], scan: Callable[[str, int], Tuple[Any, int]]) -> int:
    """Reads the object at ``at``, calling ``value(key, start)`` for each member, which returns
    where the value ends; returns where the object ends."""
    at = _past_space(text, at + 1)
    if text[at] == "}":
        return at + 1
    while True:
        key, at = scan(text, at)
        at = _past_space(text, _past_space(text, at) + 1)  # past the colon
        at = _past_space(text, value(key, at))
        if text[at] == "}":
            return at + 1
        at = _past_space(text, at + 1)  # past the comma


def _array(text: str, at: int, item: Callable[[int, int], int]) -> int:
    """Reads the array at ``at``, calling ``item(index, start)`` for each item, which returns
    where it ends; returns where the array ends."""
    at = _past_space(text, at + 1)
    if text[at] == "]":
        return at + 1
    index = 0
    while True:
        at = _past_space(text, item(index, at))
        index += 1
        if text[at] == "]":
            return at + 1
        at = _past_space(text, at + 1)


def _encoded(text: str, start: int, end: int, lines: List[str]) -> str:
    """The JSON of a source made of ``lines``, in the style of the old value at ``text[start:end]``:
    a string or a list of strings laid out as it was, each unchanged string spelt as it was."""
    import json

    ascii_only = text.isascii()

    def spelt(value: str, raw: Dict[str, str]) -> str:
        if value in raw:
            return raw[value]
        # escaped in an ASCII file, and a lone surrogate (`\ud800` in the JSON) anywhere: it has no UTF-8
        return json.dumps(value, ensure_ascii=ascii_only or _SURROGATE.search(value) is not None)

    if text[start] == '"':
        spellings = _string_lines(text[start:end])
        return '"' + "".join(spelt(line, spellings)[1:-1] for line in lines) + '"'
    items: List[Tuple[int, int]] = []
    raw: Dict[str, str] = {}
    scan = _scanner()

    def item(_: int, at: int) -> int:
        value, after = scan(text, at)
        items.append((at, after))
        raw.setdefault(value, text[at:after])
        return after

    _array(text, start, item)
    if len(items) >= 2:
        lead, sep, trail = text[start + 1:items[0][0]], text[items[0][1]:items[1][0]], text[items[-1][1]:end - 1]
    elif items:
        lead, trail = text[start + 1:items[0][0]], text[items[0][1]:end - 1]
        sep = "," + (lead if "\n" in lead or "\r" in lead else _after_comma(text))
    else:
        lead, sep, trail = _layout(text, start)
    if not lines:
        return "[]"
    return "[" + lead + sep.join(spelt(line, raw) for line in lines) + trail + "]"


def _string_lines(token: str) -> Dict[str, str]:
    """line -> its spelling (quoted) in the JSON string ``token``, for each line of its value."""
    import json

    pieces, at = [], 1
    units = list(re.finditer(r"\\u[0-9a-fA-F]{4}|\\.|[^\\]", token[1:-1], re.DOTALL))
    for k, unit in enumerate(units):
        char = json.loads('"' + unit.group() + '"') if unit.group().startswith("\\") else unit.group()
        following = units[k + 1].group() if k + 1 < len(units) else ""
        if char in _BREAKS and not (char == "\r" and following in ("\n", "\\n", "\\u000a", "\\u000A")):
            pieces.append(token[at:unit.end() + 1])
            at = unit.end() + 1
    if at < len(token) - 1:
        pieces.append(token[at:-1])
    raw = ['"' + piece + '"' for piece in pieces]
    lines = [json.loads(r) for r in raw]
    if lines != json.loads(token).splitlines(keepends=True):
        return {}  # not split as Python splits it: spelt anew
    return dict(zip(reversed(lines), reversed(raw)))


def _after_comma(text: str) -> str:
    """The spaces the file puts after a comma between items (``json.dumps``: one)."""
    m = re.search(r',([ \t]*)"', text)
    return m.group(1) if m else ""


def _layout(text: str, start: int) -> Tuple[str, str, str]:
    """(after ``[``, between items, before ``]``) for an empty list at ``start``: the items one
    level deeper than the line of its key, with the file's line break and indentation unit."""
    line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
    if line_start == 0:  # all on one line
        return "", "," + _after_comma(text), ""
    indent = text[line_start:_past_space(text, line_start)].lstrip("\r\n")
    newline = "\r\n" if "\r\n" in text else "\r" if "\n" not in text else "\n"
    unit = re.search(r"[\r\n]([ \t]+)", text)
    deeper = newline + indent + (unit.group(1) if unit else " ")
    return deeper, "," + deeper, newline + indent


def prefilter_input(data: bytes, display: str) -> bytes:
    """What the prefilter reads: the file's bytes, or for a notebook the module its code cells
    make (rules' line-level patterns do not hold for the JSON around them)."""
    if not display.endswith(".ipynb"):
        return data
    try:
        return load(decode(data).text)[1].encode("utf-8", "surrogatepass")
    except Unsupported as exc:  # its code cells, for the rules' prefilter (it is reported as unsupported anyway)
        return exc.code.encode("utf-8", "surrogatepass")
    except (ValueError, KeyError, TypeError, AttributeError, SyntaxError, LookupError):
        return data  # not a readable notebook: the transform reports it
