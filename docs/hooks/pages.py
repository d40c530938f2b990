"""MkDocs hooks: the Benchmarks page made at build time from experiments/, never typed; and
Sphinx roles (``:func:`name```) in docstrings shown as code, as they read in ``help()``.

Each row of the table in ``experiments/README.md`` names a script, what it measures and its
results names (comma-separated); the page shows that table and then each results file the
script wrote (``experiments/results/<name>.md``, its headings moved one level down; the ``.json``
as it is for a script that writes no ``.md``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def benchmarks_markdown() -> str:
    """The generated body of the Benchmarks page."""
    readme = (EXPERIMENTS / "README.md").read_text(encoding="utf-8")
    rows = [r for r in readme.splitlines() if r.startswith("| `") and r.count("|") >= 4]
    parts = ["| script | what it measures |", "|---|---|"]
    sections = []
    for row in rows:
        script, what, names = (c.strip() for c in row.strip("|").split("|")[:3])
        parts.append(f"| {script} | {what} |")
        for name in names.split(","):  # a script may write several results
            results = EXPERIMENTS / "results" / f"{name.strip().strip('`')}.md"
            data = results.with_suffix(".json")
            if results.exists():
                text = results.read_text(encoding="utf-8")
                text = re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)
                sections.append(f"{text.strip()}\n\n*From `experiments/{script.strip('`')}`.*")
            elif data.exists():  # a script that writes its figures as JSON only
                body = data.read_text(encoding="utf-8").strip()
                sections.append(
                    f"## {what} ({data.name})\n\n```json\n{body}\n```\n\n"
                    f"*From `experiments/{script.strip('`')}`.*"
                )
    return "\n".join(parts) + "\n\n" + "\n\n".join(sections) + "\n"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri == "benchmarks.md":
        return markdown.replace("<!-- generated -->", benchmarks_markdown())
    return markdown


#: A Sphinx role before a code span, as mkdocstrings renders ``:func:`name``` from a docstring.
ROLE = re.compile(r":(?:mod|func|class|meth|data|attr|exc|obj):(?=<code>)")


def on_page_content(html: str, **_: Any) -> str:
    return ROLE.sub("", html)
