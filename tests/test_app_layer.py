"""The application layer: screen and A/B campaigns from plain option records, no argparse."""

from __future__ import annotations

import json
import logging

import pytest
from zl_core import app
from zl_core.foundation.errors import UnknownProviderError, UsageError


@pytest.mark.slow
def test_screen_then_ab_from_records_alone(fake_host, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="zl_core")
    where = app.Where(suite="fake")
    screen = app.screen(fake_host, app.ScreenOptions(ops=("gemm", "pointwise"), where=where,
                                                     runs_root=tmp_path))
    assert [r["verdict"] for r in screen.rows] == ["IR_CHANGED", "NO_IR_DIFF"]
    said = [r.message for r in caplog.records if r.name == "zl_core.app.commands"]
    assert said and "switch FAKE_SWITCH (A=0 B=1)" in said[0]
    # No operators named: the A/B campaign takes the screen's IR_CHANGED ones, its switch,
    # backend and device, and one of its NO_IR_DIFF operators as an A/A control.
    done = app.ab(fake_host, app.AbOptions(where=where, runs_root=tmp_path, rounds=4,
                                           controls=1, telemetry_interval=0))
    assert done.screen == screen.campaign
    assert [(r.op.op, r.control, r.state) for r in done.runs] == [("gemm", False, "done"),
                                                                  ("pointwise", True, "done")]
    assert "zl ab: switch FAKE_SWITCH A=0 B=1 (from the screen)" in caplog.messages
    meta = json.loads((done.campaign / "campaign.json").read_text())
    assert meta["kind"] == "ab" and meta["screen"] == str(screen.campaign)
    model = app.campaign_report(done.campaign, threshold_pct=done.threshold_pct)
    assert model["kind"] == "rounds" and model["summary"]["controls"]["ops"] == ["pointwise"]
    path = app.keep_report_json(done.campaign, model)
    assert json.loads(path.read_text())["summary"]["operators"][0]["op"] == "gemm"


def test_ab_with_nothing_changed_runs_nothing(fake_host, tmp_path):
    where = app.Where(suite="fake")
    screen = app.screen(fake_host, app.ScreenOptions(ops=("pointwise",), where=where, runs_root=tmp_path))
    done = app.ab(fake_host, app.AbOptions(where=where, runs_root=tmp_path))
    assert done.campaign is None and done.runs == () and done.screen == screen.campaign
    assert not list(tmp_path.glob("ab_*"))


def test_ab_without_a_screen_or_ops_says_what_to_run(fake_host, tmp_path):
    with pytest.raises(UsageError, match="run 'zl screen"):
        app.ab(fake_host, app.AbOptions(where=app.Where(suite="fake"), runs_root=tmp_path))
    assert list(tmp_path.iterdir()) == []


class _Suite:
    def __init__(self, name: str, source_env: str = "") -> None:
        self.name, self.source_env = name, source_env


class _Host:
    def providers(self):
        return {"checkouts": _Suite("checkouts", "CHECKOUTS_DIR"), "packaged": _Suite("packaged")}


def _screen_meta(suite: str):
    from zl_core.store.record import CampaignRecord

    return CampaignRecord.from_json({"kind": "screen", "suite": suite, "sources": [
        {"name": "main", "path": "/src/a"}, {"name": "more", "path": "/src/b"}]})


@pytest.mark.parametrize(("suite", "taken"), [("checkouts", ("main=/src/a", "more=/src/b")),
                                              ("packaged", None)])
def test_ab_takes_the_screens_suite_and_its_checkouts_where_it_runs_from_them(suite, taken):
    # Asked of the provider (Provider.source_env), whatever the suite is called.
    from zl_core.app.commands import where_from_screen

    meta = _screen_meta(suite)
    where = where_from_screen(_Host(), app.Where(), meta)
    assert where.suite == suite
    assert (None if where.source is None else (where.source, *where.more_sources)) == taken
    named = where_from_screen(_Host(), app.Where(source="/mine"), meta)  # the user's own wins
    assert (named.suite, named.source, named.more_sources) == (None, "/mine", ())


def test_ab_refuses_a_screen_whose_suite_is_not_installed():
    from zl_core.app.commands import where_from_screen

    with pytest.raises(UnknownProviderError, match="suite 'gone', which is not installed here "
                                                   r"\(installed: checkouts, packaged\)"):
        where_from_screen(_Host(), app.Where(), _screen_meta("gone"))
    assert where_from_screen(_Host(), app.Where(suite="packaged"), _screen_meta("gone")).suite == "packaged"
