"""`jaxmigrate server`: a language server (LSP over stdio, on pygls) for editors.

Diagnostics of Python files and notebook cells on open, change (debounced) and save, as `check`
reports them (jaxmigrate/api.py: the same settings, configuration and project facts); code
actions: each finding's fix, `source.fixAll` (what `fix` applies) and a `# noqa: CODE` for a
finding; hover: the finding's code to write and its rule's documentation (`jaxmigrate explain`).
Settings come from ``initializationOptions``: ``select``, ``ignore`` (lists of codes), ``targetJax``
(as --target-jax; default $JAXMIGRATE_TARGET_JAX), ``unsafeFixes``, ``config`` (as --config).
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from jaxmigrate import __version__, api

DEBOUNCE_SECONDS = 0.05  # after a change, this long without another before the text is checked
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.jaxmigrate"
_MARKER = {"safe": "[*] ", "unsafe": "[~] "}  # as the text output marks a finding with a fix
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class Checked:
    """A document's text as last checked, and its findings."""

    version: Optional[int]
    text: str
    findings: List[api.Finding]
    notebook: Optional[str] = None  # a notebook cell's: the notebook's uri (its fixes are edits of its code cells)

    @property
    def cell(self) -> bool:
        return self.notebook is not None


class JaxmigrateServer(LanguageServer):
    def __init__(self) -> None:
        cells = [types.NotebookCellLanguage(language="python")]
        super().__init__("jaxmigrate", __version__, notebook_document_sync=types.NotebookDocumentSyncOptions(
            notebook_selector=[types.NotebookDocumentFilterWithCells(cells=cells, notebook="jupyter-notebook")],
            save=True))
        self.checker = api.Workspace(api.Options(target_jax=os.environ.get("JAXMIGRATE_TARGET_JAX") or None))
        self.checked: Dict[str, Checked] = {}
        self.broken: Optional[str] = None  # why the settings cannot be used, said as each document's one JM000
        self.notebooks: Dict[str, Notebook] = {}  # a notebook's uri -> its cells as last checked
        self.pending: Dict[str, asyncio.Task] = {}

    def configure(self, settings: Optional[dict]) -> None:
        """``initializationOptions``: the options of `check` (see the module's docstring)."""
        settings = settings or {}
        options = api.Options(select=tuple(settings.get("select") or ()), ignore=tuple(settings.get("ignore") or ()),
                              target_jax=settings.get("targetJax") or self.checker.options.target_jax,
                              unsafe_fixes=bool(settings.get("unsafeFixes", False)), config=settings.get("config"),
                              jobs=1)
        try:
            self.checker, self.broken = api.Workspace(options), None
        except api.OptionError as exc:  # a `config` file that cannot be read: every document says so
            self.checker, self.broken = api.Workspace(), f"configuration: {exc}"

    def path_of(self, uri: str) -> str:
        return uris.to_fs_path(uri) or "untitled.py"

    def check(self, uri: str) -> Checked:
        """The document's findings now (checked again only when its text changed); a notebook
        cell's are its notebook's findings in that cell."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            return self.check_notebook(notebook.uri)[uri]
        document = self.workspace.get_text_document(uri)
        text, last = document.source, self.checked.get(uri)
        if last is None or last.text != text:
            why = self.broken
            if why is None:
                try:
                    findings = self.checker.check_source(text, self.path_of(uri))
                except api.OptionError as exc:  # a bad setting or configuration: said where the file starts
                    why = f"configuration: {exc}"
            if why is not None:
                findings = [api.Finding(self.path_of(uri), 1, 1, 1, 1, api.ERROR_CODE, why)]
            last = self.checked[uri] = Checked(document.version, text, findings)
        return last

    def check_notebook(self, uri: str) -> Dict[str, Checked]:
        """Each cell's text and findings (``Checked.version`` None): the notebook's code cells
        checked as `check` checks an .ipynb file with their text, each finding in its cell."""
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        assert notebook is not None
        texts = [self.workspace.get_text_document(cell.document).source for cell in notebook.cells]
        ipynb = _ipynb(notebook, texts)
        if uri not in self.notebooks or self.notebooks[uri].text != ipynb:
            path = self.path_of(uri)
            path = path if path.endswith(".ipynb") else path + ".ipynb"
            by_cell: Dict[str, Checked] = {cell.document: Checked(None, text, [], notebook=uri)
                                           for cell, text in zip(notebook.cells, texts)}
            for f in self.checker.check_source(ipynb, path):
                match = _CELL.match(f.message)
                index = int(match.group(1)) - 1 if match else 0
                if notebook.cells and 0 <= index < len(notebook.cells):
                    by_cell[notebook.cells[index].document].findings.append(f)
            self.notebooks[uri] = Notebook(ipynb, path, by_cell)
        return self.notebooks[uri].cells

    def fix_edit(self, uri: str, checked: Checked, only: Optional[api.Finding] = None) -> Optional[types.WorkspaceEdit]:
        """The edit that applies the fixes `fix` would (or only ``only``'s) to a document, or to
        the code cells of a cell's notebook; None when nothing changes."""
        if checked.notebook is None:
            fixed = self.checker.fix_source(checked.text, self.path_of(uri), only=only)
            if not fixed.edits:
                return None
            return _workspace_edit(uri, fixed.edits, self.workspace.position_codec, _lines(checked.text))
        notebook = self.notebooks[checked.notebook]
        fixed = self.checker.fix_source(notebook.text, notebook.path, only=only)
        if not fixed.edits:
            return None
        changes = {}
        for (cell_uri, cell), new in zip(notebook.cells.items(), _sources(fixed.text)):
            if new != cell.text:
                changes[cell_uri] = _text_edits(api.edits(cell.text, new), self.workspace.position_codec, _lines(cell.text))
        return types.WorkspaceEdit(changes=changes)

    def publish(self, uri: str) -> None:
        """Publish a document's diagnostics, or every cell's of a notebook (``uri``: the notebook's)."""
        if self.workspace.get_notebook_document(notebook_uri=uri) is not None:
            cells = self.check_notebook(uri)
        else:
            cells = {uri: self.check(uri)}
        for cell_uri, checked in cells.items():
            codec, lines = self.workspace.position_codec, _lines(checked.text)
            diagnostics = [diagnostic(f, codec, lines, checked.cell) for f in checked.findings]
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(cell_uri, diagnostics, checked.version))

    def later(self, uri: str) -> None:
        """Publish the document's diagnostics once its changes pause for ``DEBOUNCE_SECONDS``."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()

        async def publish_later() -> None:
            await asyncio.sleep(DEBOUNCE_SECONDS)
            self.pending.pop(uri, None)
            self.publish(uri)

        self.pending[uri] = asyncio.get_running_loop().create_task(publish_later())


def _lines(text: str) -> List[str]:
    return _LINE_BREAK.split(text)


_CELL = re.compile(r"^cell (\d+): ")  # how a notebook's finding says its cell (engine/pipeline.py)


@dataclass
class Notebook:
    """A notebook as last checked: as an .ipynb file's text, its path, each cell's ``Checked``."""

    text: str
    path: str
    cells: Dict[str, Checked]


def _sources(ipynb: str) -> List[str]:
    """Each cell's text in an .ipynb file's text."""
    import json

    return [cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            for cell in json.loads(ipynb)["cells"]]


def _ipynb(notebook: types.NotebookDocument, texts: Sequence[str]) -> str:
    """The notebook as an .ipynb file (nbformat 4) with these cell texts."""
    import json

    cells: List[dict] = []
    for cell, text in zip(notebook.cells, texts):
        if cell.kind == types.NotebookCellKind.Code:
            cells.append(dict(cell_type="code", metadata={}, source=text, outputs=[], execution_count=None))
        else:
            cells.append(dict(cell_type="markdown", metadata={}, source=text))
    return json.dumps(dict(cells=cells, metadata=notebook.metadata or {}, nbformat=4, nbformat_minor=5))


def _position(codec: PositionCodec, lines: Sequence[str], line: int, column: int) -> types.Position:
    """An LSP position (0-based, in the client's units) of a 1-based line and character column."""
    line, column = max(line - 1, 0), max(column - 1, 0)
    if line < len(lines) and lines[line].isascii():  # a character is a unit in every encoding (most lines)
        return types.Position(line, column)
    return codec.position_to_client_units(lines, ServerTextPosition(line, column))


def _range(codec: PositionCodec, lines: Sequence[str], line: int, column: int, end_line: int, end_column: int):
    return types.Range(_position(codec, lines, line, column), _position(codec, lines, end_line, end_column))


def diagnostic(finding: api.Finding, codec: PositionCodec, lines: Sequence[str], cell: bool = False) -> types.Diagnostic:
    """A finding as a diagnostic: its code and a link to the rule's page, `[*]`/`[~]` before the
    message of one with a safe or unsafe fix (none: a change by hand), the finding as
    `check --format json` gives it in ``data``; in a notebook ``cell``, without the message's
    `cell N: `."""
    from jaxmigrate.reporting.formats import DOCS_URL

    error = finding.code == api.ERROR_CODE
    end = (finding.end_line, finding.end_column)
    if error:  # a position, not a span: the rest of its line
        end = (finding.line, len(lines[finding.line - 1]) + 1 if finding.line <= len(lines) else finding.column)
    record = finding.to_dict()
    del record["path"]
    return types.Diagnostic(
        range=_range(codec, lines, finding.line, finding.column, *end),
        message=_MARKER.get(finding.fix_safety or "", "") + (_CELL.sub("", finding.message) if cell else finding.message),
        severity=types.DiagnosticSeverity.Error if error else types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=None if error else types.CodeDescription(href=DOCS_URL.format(code=finding.code)),
        source="jaxmigrate",
        data=record,
    )


server = JaxmigrateServer()


@server.feature(types.INITIALIZE)
def initialize(ls: JaxmigrateServer, params: types.InitializeParams) -> None:
    ls.configure(params.initialization_options if isinstance(params.initialization_options, dict) else None)


def _document(params) -> str:
    """The uri of the text or notebook document a notification is about."""
    document = getattr(params, "text_document", None) or params.notebook_document
    return document.uri


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def did_open(ls: JaxmigrateServer, params) -> None:
    ls.publish(_document(params))


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def did_change(ls: JaxmigrateServer, params) -> None:
    ls.later(_document(params))


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def did_save(ls: JaxmigrateServer, params) -> None:
    """A saved file may change its project's facts (and a pyproject.toml the settings): plan anew."""
    uri = _document(params)
    path = ls.path_of(uri)
    if os.path.basename(path) == "pyproject.toml":
        ls.checker.forget()
        ls.checked.clear()
        ls.notebooks.clear()
        for open_uri in [*ls.workspace.notebook_documents, *(u for u in ls.workspace.text_documents
                                                             if ls.workspace.get_notebook_document(cell_uri=u) is None)]:
            ls.publish(open_uri)
        return
    ls.checker.forget(path)
    ls.checked.pop(uri, None)
    ls.notebooks.pop(uri, None)
    ls.publish(uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def did_close(ls: JaxmigrateServer, params) -> None:
    """Forget the document (a notebook: and its cells) and clear its diagnostics."""
    uri = _document(params)
    task = ls.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.checked.pop(uri, None)
    closed_notebook = ls.notebooks.pop(uri, None)
    for closed in list(closed_notebook.cells if closed_notebook else ()) or [uri]:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(closed, []))


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: JaxmigrateServer, params: types.HoverParams) -> Optional[types.Hover]:
    from jaxmigrate.reporting.ruledoc import render_rule
    from jaxmigrate.rules import BY_CODE

    checked = ls.check(params.text_document.uri)
    codec, lines = ls.workspace.position_codec, _lines(checked.text)
    parts = []
    for f in _at(checked.findings, codec, lines, params.position, params.position):
        rule = BY_CODE.get(f.code)
        part = f"**{f.code}** {f.message}"
        if f.suggestion:
            part += f"\n\nWrite instead:\n\n```python\n{f.suggestion}\n```"
        if rule is not None:
            part += "\n\n### " + render_rule(rule).removeprefix("# ")  # below the finding's line
        parts.append(part)
    if not parts:
        return None
    return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts)))


def _at(findings: Sequence[api.Finding], codec, lines, start: types.Position, end: types.Position) -> List[api.Finding]:
    """The findings whose span meets the range from ``start`` to ``end`` (client positions)."""
    out = []
    for f in findings:
        span = _range(codec, lines, f.line, f.column, f.end_line, f.end_column)
        if (span.start.line, span.start.character) <= (end.line, end.character) and \
                (start.line, start.character) <= (span.end.line, span.end.character):
            out.append(f)
    return out


def _text_edits(edits: Sequence[api.TextEdit], codec, lines) -> List[types.TextEdit]:
    return [types.TextEdit(_range(codec, lines, e.line, e.column, e.end_line, e.end_column), e.text) for e in edits]


def _workspace_edit(uri: str, edits: Sequence[api.TextEdit], codec, lines) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(changes={uri: _text_edits(edits, codec, lines)})


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL],
                                        resolve_provider=True))
def code_action(ls: JaxmigrateServer, params: types.CodeActionParams) -> List[types.CodeAction]:
    uri = params.text_document.uri
    checked = ls.check(uri)
    codec, lines = ls.workspace.position_codec, _lines(checked.text)
    only = params.context.only
    actions: List[types.CodeAction] = []
    if not only or any(types.CodeActionKind.QuickFix.value.startswith(kind) for kind in only):
        for f in _at(checked.findings, codec, lines, params.range.start, params.range.end):
            actions += _quick_fixes(ls, uri, checked, f, codec, lines)
    every = [f for cell in ls.notebooks[checked.notebook].cells.values() for f in cell.findings] \
        if checked.notebook is not None else checked.findings
    if any(f.fixable for f in every) and \
            (not only or any(FIX_ALL.startswith(kind) or kind == types.CodeActionKind.Source for kind in only)):
        action = types.CodeAction("jaxmigrate: fix all auto-fixable findings", kind=FIX_ALL,
                                  data={"uri": uri, "version": checked.version})
        actions.append(action if _resolves_edits(ls) else resolve_code_action(ls, action))
    return actions


def _quick_fixes(ls: JaxmigrateServer, uri: str, checked: Checked, f: api.Finding, codec, lines) -> List[types.CodeAction]:
    """A finding's fix (labelled when unsafe) and its `# noqa`."""
    actions = []
    diagnostics = [diagnostic(f, codec, lines, checked.cell)]
    edit = ls.fix_edit(uri, checked, only=f) if f.fix is not None else None
    if edit is not None:
        what = f"write `{f.suggestion}`" if f.suggestion and "\n" not in f.suggestion and len(f.suggestion) < 60 \
            else "apply its fix"
        unsafe = " (unsafe fix: it may change behaviour, review it)" if f.fix_safety == "unsafe" else ""
        actions.append(types.CodeAction(f"jaxmigrate ({f.code}): {what}{unsafe}", kind=types.CodeActionKind.QuickFix,
                                        diagnostics=diagnostics, is_preferred=f.fix_safety == "safe", edit=edit))
    noqa = _noqa_edit(checked.text, f)
    if noqa is not None and f.code != api.ERROR_CODE:
        actions.append(types.CodeAction(f"jaxmigrate ({f.code}): suppress with `# noqa: {f.code}`",
                                        kind=types.CodeActionKind.QuickFix, diagnostics=diagnostics,
                                        edit=_workspace_edit(uri, [noqa], codec, lines)))
    return actions


def _noqa_edit(text: str, f: api.Finding) -> Optional[api.TextEdit]:
    """The edit that silences ``f`` (engine/suppression.py: a `# noqa` comment on the line the
    finding starts on): ``CODE`` added to that line's ``# noqa: ...``, or ``# noqa: CODE`` at its
    end. None where a comment cannot go there (the line ends inside a string that goes on, or
    with a backslash) or a bare ``# noqa`` already silences every code."""
    import io
    import tokenize

    from jaxmigrate.engine.suppression import NOQA

    lines = _lines(text)
    if f.line > len(lines) or lines[f.line - 1].rstrip().endswith("\\"):
        return None
    line, comment = lines[f.line - 1], None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] > f.line:
                break
            if token.start[0] <= f.line < token.end[0]:  # a string (or f-string part) that goes on
                return None
            if token.type == tokenize.COMMENT and token.start[0] == f.line:
                comment = token
    except (tokenize.TokenError, SyntaxError):
        return None
    match = NOQA.search(comment.string) if comment is not None else None
    if match is not None and match.group("codes"):
        end = comment.start[1] + match.end("codes") + 1  # type: ignore[union-attr]  # a match means a comment
        return api.TextEdit(f.line, end, f.line, end, f", {f.code}")
    if match is not None:
        return None
    end = len(line.rstrip())
    return api.TextEdit(f.line, end + 1, f.line, len(line) + 1, f"  # noqa: {f.code}")


def _resolves_edits(ls: JaxmigrateServer) -> bool:
    """Whether the client asks for a code action's edit when it is chosen (codeAction/resolve)."""
    support = getattr(getattr(ls.client_capabilities.text_document, "code_action", None), "resolve_support", None)
    return support is not None and "edit" in support.properties


@server.feature(types.CODE_ACTION_RESOLVE)
def resolve_code_action(ls: JaxmigrateServer, action: types.CodeAction) -> types.CodeAction:
    """`fix all`: the fixes `jaxmigrate fix` applies to the document's text now."""
    data = action.data if isinstance(action.data, dict) else {}
    uri = str(data.get("uri", ""))
    if action.kind == FIX_ALL and uri in ls.workspace.text_documents:
        action.edit = ls.fix_edit(uri, ls.check(uri)) or types.WorkspaceEdit(changes={})
    return action


def main() -> None:
    server.start_io()
