"""How fast `jaxmigrate server` answers: first diagnostics of a legacy module, and after a change.

    python bench/server.py                          # 5,000 lines, each kind of module, 5 changes each
    python bench/server.py --lines 2000,5000 --kind pjit --changes 10

For each kind of module (``bench/generate.py:one_file``) it starts the server (a subprocess, as an
editor does), initializes it, opens the module and times, on the client's clock, from the
``didOpen`` to the ``publishDiagnostics`` (the goal: 1 s), then edits one line at a time (a
comment added near the top, then near the end) and times from each ``didChange`` to its
diagnostics (the goal: 100 ms; this includes the server's debounce, DEBOUNCE_SECONDS, and the
client's reading of the diagnostics). Beside each wall time, the server process's CPU time over it
(from /proc, Linux only: the steadier figure on a loaded machine). The column "analysis" is the part of that which is the
engine's: ``api.Workspace.check_source`` of the changed text, timed in this process. The file is
written to a temporary folder first, so the project facts come from disk as in an editor.
Needs the server extra (pygls).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import one_file  # noqa: E402

KINDS = ("pjit", "mixed", "multihost")


async def _time_one(text: str, folder: Path, changes: int) -> Dict[str, Any]:
    path = folder / "module.py"
    path.write_text(text)
    uri = path.resolve().as_uri()
    client = LanguageClient("bench", "1")
    published: asyncio.Queue = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait((time.perf_counter(), params))

    started = time.perf_counter()
    await client.start_io(sys.executable, "-m", "jaxmigrate", "server")
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                         root_uri=folder.resolve().as_uri()))
    client.initialized(types.InitializedParams())
    ready = time.perf_counter()
    pid = client._server.pid  # type: ignore[union-attr]  # started above
    sent, cpu = time.perf_counter(), _cpu(pid)
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
    at, params = await published.get()
    first, first_cpu, count = at - sent, _cpu(pid) - cpu, len(params.diagnostics)
    lines = text.count("\n")
    after: List[float] = []
    after_cpu: List[float] = []
    for version in range(2, changes + 2):
        line = 40 if version % 2 else lines - 5
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, 0), types.Position(line, 0)), text=f"# edit {version}\n")
        sent, cpu = time.perf_counter(), _cpu(pid)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri), [change]))
        at, params = await published.get()
        after.append(at - sent)
        after_cpu.append(_cpu(pid) - cpu)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return dict(start=ready - started, first=first, after=after, diagnostics=count, analysis=_analysis(text, path),
                first_cpu=first_cpu, after_cpu=after_cpu)


def _cpu(pid: int) -> float:
    """A process's user and system CPU seconds so far (0 where /proc cannot tell)."""
    import os

    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _analysis(text: str, path: Path) -> float:
    """The engine's time for a changed text (its settings and plan computed before)."""
    from jaxmigrate import api

    workspace = api.Workspace(api.Options(jobs=1))
    workspace.check_source(text, str(path))
    changed = text.replace("\n", "\n# edit\n", 1)
    started = time.perf_counter()
    workspace.check_source(changed, str(path))
    return time.perf_counter() - started


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="5000", help="comma-separated sizes (default %(default)s)")
    parser.add_argument("--kind", default=",".join(KINDS), help="comma-separated: pjit, mixed, multihost")
    parser.add_argument("--changes", type=int, default=5, help="edits timed after the first diagnostics")
    args = parser.parse_args(argv)
    print(f"{'module':<16} {'diagnostics':>11} {'server up':>10} {'first (cpu)':>14} "
          f"{'after a change: median (cpu), max':>36} {'analysis':>9}")
    for size in (int(s) for s in args.lines.split(",")):
        for kind in args.kind.split(","):
            with tempfile.TemporaryDirectory() as folder:
                r = asyncio.run(_time_one(one_file(size, kind), Path(folder), args.changes))
            after, after_cpu = r["after"], r["after_cpu"]
            assert isinstance(after, list) and isinstance(after_cpu, list)
            print(f"{kind + ' ' + str(size):<16} {r['diagnostics']:>11} {r['start']:>9.2f}s "
                  f"{r['first']:>6.2f}s ({r['first_cpu']:.2f}s) "
                  f"{statistics.median(after) * 1000:>15.0f} ms ({statistics.median(after_cpu) * 1000:.0f} ms), "
                  f"{max(after) * 1000:.0f} ms {r['analysis'] * 1000:>6.0f} ms")


if __name__ == "__main__":
    main()
