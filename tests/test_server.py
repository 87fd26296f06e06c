"""`jaxmigrate server` with a real client (pytest-lsp): the server runs as a subprocess and is
spoken to in LSP over its stdin and stdout. One server serves the module's tests."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = Path(__file__).resolve().parent.parent
LEGACY = 'from jax.experimental.pjit import pjit\n\nf = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n'
MANUAL = "from jax.experimental.maps import xmap\n"

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _env(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "JAXMIGRATE_TARGET_JAX"}
    env["JAXMIGRATE_CACHE_DIR"] = str(cache)
    return env


async def _started(cache: Path, options: dict) -> LanguageClient:
    config = ClientServerConfig([sys.executable, "-m", "jaxmigrate", "server"], server_env=_env(cache))
    client = await config.start()
    client.initialize_result = await client.initialize_session(types.InitializeParams(  # type: ignore[attr-defined]
        capabilities=client_capabilities("visual-studio-code"), initialization_options=options))
    return client


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(tmp_path_factory):
    started = await _started(tmp_path_factory.mktemp("server-cache"), {"targetJax": "0.7.0"})
    yield started
    await started.shutdown_session()
    await started.stop()


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


async def _open(client: LanguageClient, path: Path, text: str, version: int = 1) -> list:
    uri = _uri(path)
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", version, text)))
    return await _diagnostics(client, uri)


async def _change(client: LanguageClient, path: Path, version: int, change) -> list:
    uri = _uri(path)
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=version, uri=uri), [change]))
    return await _diagnostics(client, uri)


async def _diagnostics(client: LanguageClient, uri: str) -> list:
    """The diagnostics the server publishes next for the document (the client keeps the last)."""
    async def published() -> list:
        while uri not in client.diagnostics:
            await asyncio.sleep(0.005)
        return list(client.diagnostics[uri])

    return await asyncio.wait_for(published(), timeout=60)


def _close(client: LanguageClient, path: Path) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(_uri(path))))


def _apply(text: str, edits) -> str:
    """The text after LSP text edits (ASCII text: UTF-16 units are characters)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


async def test_initialize_says_what_the_server_does(tmp_path):
    started = await _started(tmp_path / "cache", {})
    try:
        result = started.initialize_result
    finally:
        await started.shutdown_session()
        await started.stop()
    assert result.server_info.name == "jaxmigrate"
    capabilities = result.capabilities
    assert capabilities.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert capabilities.text_document_sync.save and capabilities.hover_provider
    assert set(capabilities.code_action_provider.code_action_kinds) == {"quickfix", "source.fixAll.jaxmigrate"}


async def test_diagnostics_on_open_carry_code_link_severity_and_fix_kind(client, tmp_path):
    path = tmp_path / "legacy.py"
    path.write_text(LEGACY + MANUAL)
    diagnostics = await _open(client, path, LEGACY + MANUAL)
    by_code = {}
    for d in diagnostics:
        by_code.setdefault(d.code, []).append(d)
    assert sorted(by_code) == ["JM101", "JM203"]
    rename = by_code["JM101"][0]
    assert rename.range.start == types.Position(2, 14)  # `in_axis_resources`, 0-based
    assert rename.message.startswith("[*] `in_axis_resources`")
    assert rename.severity == types.DiagnosticSeverity.Warning and rename.source == "jaxmigrate"
    assert rename.code_description.href.endswith("/docs/rules/JM101.md")
    assert rename.data["fix_safety"] == "safe" and rename.data["suggestion"] == "in_shardings"
    manual = by_code["JM203"][0]
    assert not manual.message.startswith("[") and manual.data["fix_safety"] is None
    _close(client, path)


async def test_diagnostics_follow_changes_and_a_syntax_error_is_one_jm000(client, tmp_path):
    path = tmp_path / "edited.py"
    path.write_text(LEGACY)
    assert {d.code for d in await _open(client, path, LEGACY)} == {"JM101"}
    change = types.TextDocumentContentChangePartial(range=types.Range(types.Position(0, 0), types.Position(3, 0)),
                                                    text=MANUAL)
    assert [d.code for d in await _change(client, path, 2, change)] == ["JM203"]
    broken = await _change(client, path, 3, types.TextDocumentContentChangeWholeDocument(LEGACY + "def (:\n"))
    assert [d.code for d in broken] == ["JM000"] and broken[0].severity == types.DiagnosticSeverity.Error
    assert broken[0].range.start.line == 3
    _close(client, path)


async def test_a_saved_configuration_applies_to_the_open_files(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.jaxmigrate]\n")
    path = tmp_path / "configured.py"
    path.write_text(LEGACY + MANUAL)
    assert {d.code for d in await _open(client, path, LEGACY + MANUAL)} == {"JM101", "JM203"}
    (tmp_path / "pyproject.toml").write_text('[tool.jaxmigrate]\nignore = ["JM101"]\n')
    client.diagnostics.pop(_uri(path), None)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(
        _uri(tmp_path / "pyproject.toml"))))
    assert {d.code for d in await _diagnostics(client, _uri(path))} == {"JM203"}
    _close(client, path)


async def test_bad_settings_are_one_jm000_in_each_document(tmp_path):
    for options, said in [({"config": str(tmp_path / "missing.toml")}, "missing.toml: no such file"),
                          ({"select": ["JM999"]}, "unknown rule code or prefix: JM999")]:
        started = await _started(tmp_path / "cache", options)
        try:
            path = tmp_path / "legacy.py"
            path.write_text(LEGACY)
            [error] = await _open(started, path, LEGACY)
        finally:
            await started.shutdown_session()
            await started.stop()
        assert error.code == "JM000" and error.message.startswith("configuration: ") and said in error.message


async def test_a_quick_fix_applied_gives_the_fixed_text(client, tmp_path):
    path = tmp_path / "quick.py"
    path.write_text(LEGACY)
    uri = _uri(path)
    diagnostics = await _open(client, path, LEGACY)
    first = next(d for d in diagnostics if "in_axis_resources" in d.message)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), first.range, types.CodeActionContext(diagnostics=[first])))
    titles = [a.title for a in actions]
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "in_shardings" in a.title)
    assert fix.is_preferred
    assert _apply(LEGACY, fix.edit.changes[uri]) == LEGACY.replace("in_axis_resources", "in_shardings")
    noqa = next(a for a in actions if "noqa" in a.title)
    assert _apply(LEGACY, noqa.edit.changes[uri]).splitlines()[2].endswith(")  # noqa: JM101")
    fix_all = next(a for a in actions if a.kind == "source.fixAll.jaxmigrate")
    assert fix_all.edit is None, titles  # the client resolves it when chosen
    resolved = await client.code_action_resolve_async(fix_all)
    expected = LEGACY.replace("in_axis_resources", "in_shardings").replace("out_axis_resources", "out_shardings")
    assert _apply(LEGACY, resolved.edit.changes[uri]) == expected
    _close(client, path)


async def test_an_unsafe_fix_is_labelled_and_not_preferred(client, tmp_path):
    source = (ROOT / "fixtures/JM401/device_forms_unsafe/before.py").read_text()
    path = tmp_path / "unsafe.py"
    path.write_text(source)
    uri = _uri(path)
    diagnostics = await _open(client, path, source)
    unsafe = next(d for d in diagnostics if d.data["fix_safety"] == "unsafe")
    assert unsafe.message.startswith("[~] ")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), unsafe.range, types.CodeActionContext(diagnostics=[unsafe])))
    fix = next(a for a in actions if a.diagnostics and a.diagnostics[0].code == unsafe.code and "noqa" not in a.title
               and a.title.endswith("(unsafe fix: it may change behaviour, review it)"))
    assert not fix.is_preferred and _apply(source, fix.edit.changes[uri]) != source
    _close(client, path)


async def test_hover_on_a_finding_explains_its_rule_and_the_code_to_write(client, tmp_path):
    path = tmp_path / "hovered.py"
    path.write_text(LEGACY)
    uri = _uri(path)
    await _open(client, path, LEGACY)
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri),
                                                                     types.Position(2, 20)))
    text = hover.contents.value
    assert text.startswith("**JM101** `in_axis_resources` was removed")
    assert "```python\nin_shardings\n```" in text
    assert "### JM101: pjit-axis-resources" in text and "**Fix safety**" in text  # `jaxmigrate explain JM101`
    nothing = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri),
                                                                       types.Position(1, 0)))
    assert nothing is None
    _close(client, path)


def _notebook(cells) -> dict:
    return dict(cells=[dict(cell_type=kind, metadata={}, source=text, **(dict(outputs=[], execution_count=None)
                                                                          if kind == "code" else {}))
                       for kind, text in cells], metadata={}, nbformat=4, nbformat_minor=5)


async def test_a_notebook_gets_diagnostics_in_its_cells_as_check_gives_them(client, tmp_path):
    cells = [("code", "from jax.experimental.pjit import pjit\n"), ("markdown", "# Train\n"),
             ("code", "f = pjit(abs, in_axis_resources=None, out_axis_resources=None)\n")]
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(_notebook(cells)))
    uri = _uri(path)
    cell_uris = [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(cells))]
    kinds = {"code": types.NotebookCellKind.Code, "markdown": types.NotebookCellKind.Markup}
    for cell_uri in cell_uris:
        client.diagnostics.pop(cell_uri, None)
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(uri, "jupyter-notebook", 1, [types.NotebookCell(kinds[kind], cell_uri)
                                                            for (kind, _), cell_uri in zip(cells, cell_uris)]),
        [types.TextDocumentItem(cell_uri, "python" if kind == "code" else "markdown", 1, text)
         for (kind, text), cell_uri in zip(cells, cell_uris)]))
    last = await _diagnostics(client, cell_uris[2])
    assert list(client.diagnostics[cell_uris[0]]) == [] and list(client.diagnostics[cell_uris[1]]) == []
    out = subprocess.run([sys.executable, "-m", "jaxmigrate", "check", "--format", "json", "-q", str(path)],
                         env={**_env(tmp_path / "cli-cache"), "JAXMIGRATE_TARGET_JAX": "0.7.0"},
                         capture_output=True, text=True)
    expected = json.loads(out.stdout)
    assert [d.data for d in last] == [{k: v for k, v in r.items() if k != "path"} for r in expected]
    assert [d.code for d in last] == ["JM101", "JM101"]
    first = last[0]
    assert first.range.start == types.Position(0, 14) and first.message.startswith("[*] `in_axis_resources`")
    assert first.data["message"].startswith("cell 3: ")  # as check says it; the cell's diagnostic need not
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(cell_uris[2]), first.range, types.CodeActionContext(diagnostics=[first])))
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "in_shardings" in a.title)
    assert list(fix.edit.changes) == [cell_uris[2]]  # the edit of the notebook's module, in the cell
    assert _apply(cells[2][1], fix.edit.changes[cell_uris[2]]) == cells[2][1].replace("in_axis_resources", "in_shardings")
    fix_all = await client.code_action_resolve_async(next(a for a in actions if a.kind == "source.fixAll.jaxmigrate"))
    assert _apply(cells[2][1], fix_all.edit.changes[cell_uris[2]]) == \
        "f = pjit(abs, in_shardings=None, out_shardings=None)\n"
    client.diagnostics.pop(cell_uris[2], None)
    edit = types.TextDocumentContentChangeWholeDocument("f = pjit(abs, in_shardings=None, out_shardings=None)\n")
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        types.VersionedNotebookDocumentIdentifier(version=2, uri=uri),
        types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(types.VersionedTextDocumentIdentifier(version=2, uri=cell_uris[2]),
                                                     [edit])]))))
    assert await _diagnostics(client, cell_uris[2]) == []
    client.diagnostics.pop(cell_uris[0], None)
    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        types.NotebookDocumentIdentifier(uri), [types.TextDocumentIdentifier(u) for u in cell_uris]))
    assert await _diagnostics(client, cell_uris[0]) == []  # cleared


async def test_shutdown_leaves_no_process(tmp_path):
    started = await _started(tmp_path / "cache", {})
    path = tmp_path / "one.py"
    path.write_text(LEGACY)
    await _open(started, path, LEGACY)  # it has done some work
    process = started._server
    assert process is not None and process.returncode is None
    await started.shutdown_session()
    await started.stop()
    assert process.returncode == 0
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)


def _fixture_and_program_files() -> list:
    files = sorted(ROOT.glob("fixtures/*/*/before.py")) + sorted(ROOT.glob("fixtures/*/*/before/**/*.py"))
    return files + sorted(ROOT.glob("programs/**/*.py"))


async def test_diagnostics_equal_check_json_on_every_fixture_and_program(client, tmp_path):
    """What the server publishes for each file (its ``data``, and the range it gives) is what
    `check --format json` reports for it, with the same target."""
    files = _fixture_and_program_files()
    relative = [str(f.relative_to(ROOT)) for f in files]
    env = {**_env(tmp_path / "cli-cache"), "JAXMIGRATE_TARGET_JAX": "0.7.0"}
    out = subprocess.run([sys.executable, "-m", "jaxmigrate", "check", "--format", "json", "-q", *relative], cwd=ROOT,
                         env=env, capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    expected: dict = {name: [] for name in relative}
    for record in json.loads(out.stdout):
        expected[record.pop("path")].append(record)
    assert sum(map(len, expected.values())) > 500
    for path, name in zip(files, relative):
        diagnostics = await _open(client, path, path.read_text())
        assert [d.data for d in diagnostics] == expected[name], name
        for d in diagnostics:
            if d.code != "JM000":
                start, end = d.range.start, d.range.end
                assert (start.line + 1, start.character + 1, end.line + 1, end.character + 1) == \
                    (d.data["line"], d.data["column"], d.data["end_line"], d.data["end_column"]), name
        _close(client, path)
