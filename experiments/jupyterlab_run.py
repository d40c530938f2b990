"""Run every notebook top to bottom in a real JupyterLab, in a headless browser, and report.

For each ``notebooks/NN_*.ipynb`` (a temporary copy; the committed notebooks are not touched):
start ``jupyter lab`` on 127.0.0.1 with a random token, open the notebook in Chromium through
Playwright, run the command ``notebook:run-all-cells`` (the Run menu's "Run All Cells"), wait
until the kernel is idle and every code cell has an execution count, then collect

* error outputs (``output_type == "error"``: the traceback) and stderr streams, per cell;
* widget views: ipywidgets outputs of the notebook and how many of them JupyterLab rendered as
  live widgets (a ``.jupyter-widgets`` view, no "Error displaying widget");
* a screenshot at the first widget or figure (``experiments/results/jupyterlab/NN.png``,
  1200 px wide),

and write ``experiments/results/jupyterlab_run.{json,md}`` (cells, executed, errors, stderr,
widgets rendered, seconds per notebook).

It is not part of the test suite: it needs Chromium and the ``playwright`` Python package (the
browser is the system's; ``playwright install`` is never run). On Debian::

    apt-get install -y chromium chromium-driver
    pip install -e ".[notebook,dev]" playwright
    python experiments/jupyterlab_run.py [--chromium /usr/bin/chromium] [--only 01 04]

JupyterLab runs with no network access of its own (no news, no update checks); the notebooks
find the shared folder beside the repository and fall back to the shipped data without it,
exactly as under nbval.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
RESULTS = ROOT / "experiments" / "results"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: JupyterLab settings for the run: every cell rendered (no windowing, so the page holds every
#: output), no news fetching.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}

#: JavaScript run in the page: the state of the current notebook from JupyterLab's own models.
STATE_JS = """
() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return null;
  const session = panel.sessionContext.session;
  const kernel = session && session.kernel;
  const cells = [];
  const model = panel.content.model;
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i);
    if (cell.type !== 'code') continue;
    const outputs = cell.outputs.toJSON();
    cells.push({
      index: i,
      execution_count: cell.executionCount,
      errors: outputs.filter(o => o.output_type === 'error')
        .map(o => o.ename + ': ' + o.evalue),
      stderr: outputs.filter(o => o.output_type === 'stream' && o.name === 'stderr')
        .map(o => Array.isArray(o.text) ? o.text.join('') : o.text),
      widget_outputs: outputs.filter(o => o.data &&
        o.data['application/vnd.jupyter.widget-view+json']).length,
    });
  }
  return {
    kernel: kernel ? kernel.status : 'none',
    busy: panel.sessionContext.kernelDisplayStatus,
    cells: cells,
  };
}
"""

#: JavaScript: what the page rendered (views of widgets, their errors, error outputs).
DOM_JS = """
() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const text = q('.jp-OutputArea-output').map(e => e.innerText || '').join('\\n');
  return {
    widget_views: q('.jp-OutputArea-output .jupyter-widgets.widget-container, '
      + '.jp-OutputArea-output .jupyter-widgets.widget-inline-hbox, '
      + '.jp-OutputArea-output .jupyter-widgets.widget-inline-vbox, '
      + '.jp-OutputArea-output .jupyter-widgets.widget-vbox').filter(
        e => !e.parentElement.closest('.jupyter-widgets')).length,
    widget_errors: (text.match(/Error displaying widget|Loading widget\\.\\.\\./g) || []).length,
    stderr_outputs: q('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
      .length,
    tracebacks: q('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"] '
      + 'pre').filter(e => /Traceback|Error/.test(e.innerText || '')).length,
    images: q('.jp-OutputArea-output img').length,
  };
}
"""

#: JavaScript: save the temporary copy, shut its kernel down and close it (no dialog).
CLOSE_JS = """
async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.context) return;
  await panel.context.save();
  await panel.sessionContext.shutdown();
  setTimeout(() => panel.dispose(), 0);  // after this promise has resolved
  return true;
}
"""


def shrink_png(path: Path) -> None:
    """Rewrite a screenshot with a 256-colour palette (a third of the bytes, same look)."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256)
    small.save(path, optimize=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_lab(work: Path, port: int, token: str) -> subprocess.Popen[bytes]:
    """``jupyter lab`` on 127.0.0.1:port serving ``work``, its settings and state in ``work``."""
    settings = work / ".lab-settings"
    for name, value in SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(work / ".lab-workspaces"),
        "JUPYTER_RUNTIME_DIR": str(work / ".jupyter-runtime"),
        "JUPYTER_CONFIG_DIR": str(work / ".jupyter-config"),
    }
    log = open(work / ".lab.log", "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--ServerApp.root_dir={work}",
            f"--IdentityProvider.token={token}",
            "--expose-app-in-browser",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--ServerApp.open_browser=False",
            "--LabApp.extension_manager=readonly",  # no extension index look-ups
            *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
        ],
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def wait_for_server(port: int, token: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    url = f"http://127.0.0.1:{port}/api/status?token={token}"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - localhost
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"jupyter lab did not answer on port {port} within {timeout:.0f} s")


def run_notebook(page: Any, base: str, name: str, shot: Path, timeout: float) -> dict[str, Any]:
    """Open one notebook, run all cells, wait, collect; returns the notebook's record."""
    page.goto(f"{base}/lab/tree/{name}", wait_until="domcontentloaded")
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget && "
        "window.jupyterapp.shell.currentWidget.sessionContext && "
        "window.jupyterapp.shell.currentWidget.sessionContext.session && "
        "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel && "
        "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
        timeout=120_000,
    )
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")  # the notebook at full width
    # Outputs of the committed notebook are cleared first: everything checked below is new.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    t0 = time.perf_counter()
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    deadline = time.monotonic() + timeout
    state: dict[str, Any] | None = None
    timed_out = True
    while time.monotonic() < deadline:
        page.wait_for_timeout(1000)
        state = page.evaluate(STATE_JS)
        if (
            state
            and state["kernel"] == "idle"
            and all(c["execution_count"] for c in state["cells"])
        ):
            timed_out = False
            break
        if state and any(c["errors"] for c in state["cells"]) and state["kernel"] == "idle":
            timed_out = False  # run-all stops at the first error
            break
    seconds = time.perf_counter() - t0
    page.wait_for_timeout(1500)  # let widget views and images finish rendering
    state = page.evaluate(STATE_JS) or {"cells": [], "kernel": "none"}
    dom = page.evaluate(DOM_JS)
    # The screenshot shows the first widget, else the first figure, else the top.
    target = page.locator(".jp-OutputArea-output .jupyter-widgets").first
    if not target.count():
        target = page.locator(".jp-OutputArea-output img").first
    if target.count():
        target.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    shrink_png(shot)
    cells = state["cells"]
    return {
        "notebook": name,
        "code_cells": len(cells),
        "executed": sum(1 for c in cells if c["execution_count"]),
        "errors": [{"cell": c["index"], "error": e} for c in cells for e in c["errors"]],
        "stderr": [
            {"cell": c["index"], "text": t.strip()[:300]} for c in cells for t in c["stderr"]
        ],
        "widget_outputs": sum(c["widget_outputs"] for c in cells),
        "widget_views_rendered": dom["widget_views"],
        "widget_errors": dom["widget_errors"],
        "images": dom["images"],
        "seconds": round(seconds, 1),
        "timed_out": timed_out,
        "kernel": state["kernel"],
        "screenshot": str(shot.relative_to(ROOT)) if shot.is_relative_to(ROOT) else str(shot),
    }


def previous_records(out: Path, exclude: list[str]) -> list[dict[str, Any]]:
    """The last report's rows of the notebooks not run now (``--only``), kept as they were."""
    path = out / "jupyterlab_run.json"
    if not path.exists():
        return []
    rows = json.loads(path.read_text()).get("notebooks", [])
    return [r for r in rows if r.get("notebook") not in exclude]


def with_earlier(
    earlier: list[dict[str, Any]], records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """This run's rows with the kept rows of the last report, in notebook order."""
    return sorted(earlier + records, key=lambda r: r["notebook"])


def write_report(records: list[dict[str, Any]], out: Path, versions: dict[str, str]) -> str:
    ok = all(
        r["executed"] == r["code_cells"]
        and not r["errors"]
        and not r["timed_out"]
        and r["widget_views_rendered"] >= r["widget_outputs"]
        and not r["widget_errors"]
        for r in records
    )
    lines = [
        "# Notebooks run top to bottom in JupyterLab (headless Chromium)",
        "",
        "Each notebook (a temporary copy) opened in JupyterLab, outputs cleared, Run All Cells, "
        "waited until the kernel was idle and every code cell had an execution count. "
        f"Versions: {', '.join(f'{k} {v}' for k, v in versions.items())}. "
        f"All clean: **{'yes' if ok else 'no'}**. Seconds are wall time from Run All Cells to "
        "the last execution count, on this machine as it was (load average "
        f"{' / '.join(f'{v:.1f}' for v in os.getloadavg())} when the report was written).",
        "",
        "| notebook | code cells | executed | errors | stderr outputs | widget outputs | "
        "widget views rendered | figures | seconds | run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        lines.append(
            f"| {r['notebook']} | {r['code_cells']} | {r['executed']} | {len(r['errors'])} | "
            f"{len(r['stderr'])} | {r['widget_outputs']} | {r['widget_views_rendered']} | "
            f"{r['images']} | {r['seconds']:.0f}{' (timed out)' if r['timed_out'] else ''} | "
            f"{r.get('run_at', 'earlier (time not recorded)')} |"
        )
    problems = [
        f"- {r['notebook']} cell {e['cell']}: {e['error']}" for r in records for e in r["errors"]
    ] + [
        f"- {r['notebook']} cell {s['cell']} (stderr): {s['text'][:160]!r}"
        for r in records
        for s in r["stderr"]
    ]
    if problems:
        lines += ["", "Errors and stderr:", "", *problems]
    lines += [
        "",
        "Screenshots (1200 px wide, at the first widget or figure): "
        + ", ".join(f"`{r['screenshot']}`" for r in records)
        + ".",
        "",
        "Not part of the test suite (it needs a browser). To run it: "
        "`apt-get install -y chromium chromium-driver`, `pip install playwright` (the Python "
        "package only; the system Chromium is used, `playwright install` is not needed), then "
        "`python experiments/jupyterlab_run.py` (`--only 01 04` for some notebooks, "
        "`--chromium PATH` for another browser binary).",
        "",
    ]
    text = "\n".join(lines)
    out.mkdir(parents=True, exist_ok=True)
    (out / "jupyterlab_run.md").write_text(text)
    (out / "jupyterlab_run.json").write_text(
        json.dumps({"versions": versions, "all_clean": ok, "notebooks": records}, indent=2)
    )
    return text


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="browser executable")
    ap.add_argument(
        "--only",
        nargs="*",
        default=[],
        help="notebook name prefixes (e.g. 01 04); the other notebooks' rows of the last report"
        " are kept, each with the time it was run",
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per notebook")
    args = ap.parse_args()

    from importlib.metadata import version

    from playwright.sync_api import sync_playwright

    names = sorted(
        p.name
        for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")
        if not args.only or any(p.name.startswith(o) for o in args.only)
    )
    if not names:
        ap.error(f"no notebook in {NOTEBOOKS} matches {args.only}")
    versions = {
        pkg: version(pkg)
        for pkg in ("jupyterlab", "ipywidgets", "jupyterlab_widgets", "playwright")
    }
    token = secrets.token_hex(16)
    port = free_port()
    records: list[dict[str, Any]] = []
    earlier = previous_records(args.out, exclude=names)
    with tempfile.TemporaryDirectory(prefix="memlab-lab-") as tmp:
        work = Path(tmp)
        for name in names:
            shutil.copy2(NOTEBOOKS / name, work / name)
        lab = start_lab(work, port, token)
        try:
            wait_for_server(port, token)
            base = f"http://127.0.0.1:{port}"
            with sync_playwright() as pw:
                # a fresh, empty profile (Playwright's --user-data-dir)
                context = pw.chromium.launch_persistent_context(
                    str(work / ".chromium"),
                    executable_path=args.chromium,
                    args=CHROMIUM_ARGS,
                    headless=True,
                    viewport={"width": 1200, "height": 900},
                )
                page = context.pages[0] if context.pages else context.new_page()
                page.goto(f"{base}/lab?token={token}", wait_until="domcontentloaded")
                page.wait_for_function("() => window.jupyterapp", timeout=120_000)
                page.wait_for_timeout(2000)
                # the file browser folded away: the notebook gets the whole width
                page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
                for name in names:
                    shot = args.out / "jupyterlab" / f"{name[:2]}.png"
                    print(f"{name}: running...", flush=True)
                    record = run_notebook(page, base, name, shot, args.timeout)
                    record["run_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
                    print(
                        f"{name}: {record['executed']}/{record['code_cells']} cells, "
                        f"{len(record['errors'])} errors, widgets "
                        f"{record['widget_views_rendered']}/{record['widget_outputs']}, "
                        f"{record['seconds']:.0f} s",
                        flush=True,
                    )
                    records.append(record)
                    write_report(with_earlier(earlier, records), args.out, versions)  # partial
                    page.evaluate(CLOSE_JS)
                    page.wait_for_timeout(1000)
                context.close()
        finally:
            lab.terminate()
            try:
                lab.wait(timeout=30)
            except subprocess.TimeoutExpired:
                lab.kill()
    print(write_report(with_earlier(earlier, records), args.out, versions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
