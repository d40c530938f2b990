"""A griffe extension: a module constant's ``#:`` comment is its docstring in the API reference.

memlab documents its constants and type aliases as Sphinx does, with ``#:`` lines just above the
assignment (``#: Reciprocal-rank-fusion constant.``); griffe reads only string docstrings, and
mkdocstrings leaves out a member without one, so without this the reference would omit every
public constant of an ``__all__``.
"""

from __future__ import annotations

from typing import Any

import griffe


def comment_above(lines: list[str], lineno: int) -> str | None:
    """The ``#:`` lines directly above line ``lineno`` (1-based) of ``lines``, joined."""
    comment: list[str] = []
    at = lineno - 2
    while at >= 0 and lines[at].lstrip().startswith("#:"):
        comment.insert(0, lines[at].lstrip()[2:].strip())
        at -= 1
    return " ".join(comment) or None


class CommentDocstrings(griffe.Extension):
    """Give a module-level attribute without a docstring the ``#:`` comment above it."""

    def on_attribute_instance(self, *, attr: griffe.Attribute, **_: Any) -> None:
        if attr.docstring is not None or not attr.parent or not attr.parent.is_module:
            return
        if attr.lineno is None or attr.filepath not in attr.lines_collection:
            return
        text = comment_above(attr.lines_collection[attr.filepath], attr.lineno)
        if text:
            attr.docstring = griffe.Docstring(text, lineno=attr.lineno, parent=attr)
