"""Jupyter notebooks: their code cells are checked and fixed as one module; nothing else changes.

The code cells are joined into one module (so an import in one cell resolves names in the next),
each preceded by a marker comment; IPython magics (`%time`, `!pip`, `x?`) become placeholder
statements and cell magics (`%%bash`) leave their cell out. After fixing, the module is split
back at the markers and only the `source` of code cells is replaced: outputs, metadata and the
file's JSON layout stay as they were.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from jaxmigrate.engine.source import decode

MARKER = "# jaxmigrate-cell-{}"
_MARKER_LINE = re.compile(r"^# jaxmigrate-cell-(\d+)\r?\n", re.MULTILINE)
# a line magic, a shell escape, `x?` help, or an assignment from one (`files = !ls`, `p = %env PATH`)
_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:[%!?]|[\w.]+\?{1,2}[ \t]*$|[\w.]+[ \t]*=[ \t]*[%!])")
_PLACEHOLDER = re.compile(r"^([ \t]*)pass  # jaxmigrate-magic-(\d+)$", re.MULTILINE)


@dataclass
class Notebook:
    data: Dict[str, Any]
    indent: Optional[int]
    cells: List[int] = field(default_factory=list)  # indices of the cells joined into the module
    starts: List[int] = field(default_factory=list)  # 1-based module line of each cell's first line
    magics: List[str] = field(default_factory=list)
    # cell index -> the indentation IPython strips from a cell whose first line is indented
    dedents: Dict[int, str] = field(default_factory=dict)

    def locate(self, module_line: int) -> Tuple[int, int]:
        """(cell number, 1-based; line in that cell) of a module line."""
        k = max((i for i, start in enumerate(self.starts) if start <= module_line), default=0)
        return self.cells[k] + 1, module_line - self.starts[k] + 1


def _source(cell: Dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def load(text: str) -> Tuple[Notebook, str]:
    """The notebook and the module its code cells make."""
    import json  # here: a check of .py files never loads it

    data = json.loads(text)
    indent_match = re.search(r"\n( +)\"", text)
    nb = Notebook(data, len(indent_match.group(1)) if indent_match else None)
    parts: List[str] = []
    line = 1
    for i, cell in enumerate(data.get("cells", [])):
        src = _source(cell)
        if cell.get("cell_type") != "code" or _cell_magic(src):
            continue
        src, nb.dedents[i] = _dedented(src)
        body = []
        continued = None  # the indent of a magic whose line ends with `\`: the next line is part of it
        for raw in src.splitlines():
            m = _MAGIC.match(raw)
            if m or continued is not None:
                indent = m.group("indent") if m else continued
                nb.magics.append(raw)
                body.append(f"{indent}pass  # jaxmigrate-magic-{len(nb.magics) - 1}")
                continued = indent if raw.endswith("\\") else None
            else:
                body.append(raw)
        nb.cells.append(i)
        nb.starts.append(line + 1)
        chunk = MARKER.format(i) + "\n" + "".join(b + "\n" for b in body)
        parts.append(chunk)
        line += chunk.count("\n")
    return nb, "".join(parts)


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


def dump(nb: Notebook, module: str) -> str:
    """The notebook's JSON with each code cell's source taken from the fixed module."""
    module = _PLACEHOLDER.sub(lambda m: nb.magics[int(m.group(2))], module)
    pieces = _MARKER_LINE.split(module)
    new_sources = {int(pieces[k]): pieces[k + 1] for k in range(1, len(pieces) - 1, 2)}
    if pieces[0].strip() and new_sources:  # e.g. an import added at the very top goes to the first cell
        first = min(new_sources)
        new_sources[first] = pieces[0] + new_sources[first]
    for i, text in new_sources.items():
        if nb.dedents.get(i):
            text = "".join(nb.dedents[i] + line if line.strip() else line for line in text.splitlines(keepends=True))
        cell = nb.data["cells"][i]
        old = _source(cell)
        if not old.endswith("\n"):
            text = text[:-1] if text.endswith("\n") else text
        if text == old:
            continue
        cell["source"] = text.splitlines(keepends=True) if isinstance(cell.get("source"), list) else text
    import json

    return json.dumps(nb.data, indent=nb.indent, ensure_ascii=False) + "\n"


def prefilter_input(data: bytes, display: str) -> bytes:
    """What the prefilter reads: the file's bytes, or for a notebook the module its code cells
    make (rules' line-level patterns do not hold for the JSON around them)."""
    if not display.endswith(".ipynb"):
        return data
    try:
        return load(decode(data).text)[1].encode("utf-8", "surrogatepass")
    except (ValueError, KeyError, TypeError, AttributeError, SyntaxError, LookupError):
        return data  # not a readable notebook: the transform reports it
