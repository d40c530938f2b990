"""The models' equations take their data by keyword: ``retrievability(s, t)`` cannot swap them."""

from __future__ import annotations

import inspect

import pytest

import memlab.models as models

CLASSES = [obj for name in models.__all__ if inspect.isclass(obj := getattr(models, name))]


def _equations(cls: type) -> list[tuple[str, inspect.Signature]]:
    """The public methods and static methods of ``cls`` (classmethods are constructors)."""
    out = []
    for name, attr in inspect.getmembers_static(cls):
        if name.startswith("_") or isinstance(attr, (classmethod, property)):
            continue
        if isinstance(attr, staticmethod) or inspect.isfunction(attr):
            out.append((name, inspect.signature(getattr(cls, name))))
    return out


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_methods_with_two_or_more_data_arguments_take_them_by_keyword(cls: type) -> None:
    loose = []
    for name, signature in _equations(cls):
        params = [p for p in signature.parameters.values() if p.name != "self"]
        named = [p for p in params if p.kind is not p.VAR_KEYWORD]  # ``**state`` is by keyword
        if len(params) >= 2 and any(p.kind is not p.KEYWORD_ONLY for p in named):
            loose.append(f"{cls.__name__}.{name}{signature}")
    assert not loose, f"not keyword-only: {loose}"


def test_the_equations_are_inspected() -> None:
    names = {f"{cls.__name__}.{name}" for cls in CLASSES for name, _ in _equations(cls)}
    assert {"FSRS6.retrievability", "HeatModel.risk", "DualStrength.trace_retention"} <= names
    assert "HeatModel.preset" not in names and "FSRS6.decay" not in names
