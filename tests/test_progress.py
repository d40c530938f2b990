"""The progress switch: on by default, off by set_progress(False) or MEMLAB_PROGRESS=0."""

from __future__ import annotations

import io

import pytest

from memlab import progress as prog


@pytest.fixture(autouse=True)
def _reset_switch(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(prog.ENV_VAR, raising=False)
    previous = prog.set_progress(None)
    yield
    prog.set_progress(previous)


def test_on_by_default_and_iterates_everything() -> None:
    assert prog.progress_enabled()
    out = io.StringIO()
    bar = prog.progress(range(5), desc="work", file=out)
    assert not bar.disable
    assert list(bar) == [0, 1, 2, 3, 4]
    assert "work" in out.getvalue() and "5/5" in out.getvalue()


@pytest.mark.parametrize("value", ["0", "false", "OFF", "no"])
def test_env_var_turns_bars_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(prog.ENV_VAR, value)
    assert not prog.progress_enabled()
    out = io.StringIO()
    bar = prog.progress(range(3), desc="quiet", file=out)
    assert bar.disable
    assert list(bar) == [0, 1, 2]
    assert out.getvalue() == ""


def test_switch_beats_env_and_none_restores_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(prog.ENV_VAR, "0")
    assert prog.set_progress(True) is None
    assert prog.progress_enabled()
    assert prog.set_progress(False) is True
    assert not prog.progress_enabled()
    monkeypatch.setenv(prog.ENV_VAR, "1")
    assert not prog.progress_enabled()
    prog.set_progress(None)
    assert prog.progress_enabled()


def test_enabled_argument_beats_switch() -> None:
    prog.set_progress(False)
    out = io.StringIO()
    with prog.progress(total=4, desc="forced", enabled=True, file=out) as bar:
        bar.update(4)
    assert "4/4" in out.getvalue()


@pytest.mark.parametrize("bad", ["yes", 1, 0.0])
def test_bad_switch_values_raise_and_change_nothing(bad: object) -> None:
    prog.set_progress(False)
    with pytest.raises(TypeError, match="True, False or None"):
        prog.set_progress(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="enabled"):
        prog.progress(range(2), enabled=bad)  # type: ignore[arg-type]
    assert not prog.progress_enabled()
