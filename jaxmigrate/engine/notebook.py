"""Jupyter notebooks: their code cells are checked and fixed as one module; nothing else changes.

The code cells are joined into one module (so an import in one cell resolves names in the next),
each preceded by a marker comment; IPython magics (`%time`, `!pip`, `x?`) become placeholder
statements and cell magics (`%%bash`) leave their cell out. After fixing, the module is split
back at the markers and only the `source` of code cells is replaced: outputs, metadata and the
file's JSON layout stay as they were.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

MARKER = "# jaxmigrate-cell-{}"
_MARKER_LINE = re.compile(r"^# jaxmigrate-cell-(\d+)\r?\n", re.MULTILINE)
_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:[%!?]|[\w.]+\?{1,2}[ \t]*$)")
_PLACEHOLDER = re.compile(r"^([ \t]*)pass  # jaxmigrate-magic-(\d+)$", re.MULTILINE)


@dataclass
class Notebook:
    data: Dict[str, Any]
    indent: Optional[int]
    cells: List[int] = field(default_factory=list)  # indices of the cells joined into the module
    starts: List[int] = field(default_factory=list)  # 1-based module line of each cell's first line
    magics: List[str] = field(default_factory=list)

    def locate(self, module_line: int) -> Tuple[int, int]:
        """(cell number, 1-based; line in that cell) of a module line."""
        k = max((i for i, start in enumerate(self.starts) if start <= module_line), default=0)
        return self.cells[k] + 1, module_line - self.starts[k] + 1


def _source(cell: Dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def load(text: str) -> Tuple[Notebook, str]:
    """The notebook and the module its code cells make."""
    data = json.loads(text)
    indent_match = re.search(r"\n( +)\"", text)
    nb = Notebook(data, len(indent_match.group(1)) if indent_match else None)
    parts: List[str] = []
    line = 1
    for i, cell in enumerate(data.get("cells", [])):
        src = _source(cell)
        if cell.get("cell_type") != "code" or src.lstrip().startswith("%%"):
            continue
        body = []
        for raw in src.splitlines():
            m = _MAGIC.match(raw)
            if m:
                nb.magics.append(raw)
                body.append(f"{m.group('indent')}pass  # jaxmigrate-magic-{len(nb.magics) - 1}")
            else:
                body.append(raw)
        nb.cells.append(i)
        nb.starts.append(line + 1)
        chunk = MARKER.format(i) + "\n" + "".join(b + "\n" for b in body)
        parts.append(chunk)
        line += chunk.count("\n")
    return nb, "".join(parts)


def dump(nb: Notebook, module: str) -> str:
    """The notebook's JSON with each code cell's source taken from the fixed module."""
    module = _PLACEHOLDER.sub(lambda m: nb.magics[int(m.group(2))], module)
    pieces = _MARKER_LINE.split(module)
    new_sources = {int(pieces[k]): pieces[k + 1] for k in range(1, len(pieces) - 1, 2)}
    if pieces[0].strip() and new_sources:  # e.g. an import added at the very top goes to the first cell
        first = min(new_sources)
        new_sources[first] = pieces[0] + new_sources[first]
    for i, text in new_sources.items():
        cell = nb.data["cells"][i]
        old = _source(cell)
        if not old.endswith("\n"):
            text = text[:-1] if text.endswith("\n") else text
        if text == old:
            continue
        cell["source"] = text.splitlines(keepends=True) if isinstance(cell.get("source"), list) else text
    return json.dumps(nb.data, indent=nb.indent, ensure_ascii=False) + "\n"
