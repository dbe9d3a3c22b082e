"""The rules behind a re-tuned campaign, without processes: the order its rounds run their
three sides in, what a first-process penalty leaves in each effect, near ties among
changed picks, and the manifest key that asks for side R."""

from __future__ import annotations

import pytest
from zl_core.decisions.picks import compare_picks
from zl_core.foundation.errors import BadInputError
from zl_core.interface.picks import Pick
from zl_core.stats import order
from zl_core.store.layout import RETUNED

PAIRS = (("A", "B"), ("A", RETUNED), ("B", RETUNED))


def test_a_against_b_keeps_the_counterbalanced_order():
    rounds = range(1, 25)
    assert order.pair_order("A", "B", rounds) == order.round_order(order.COUNTERBALANCED, rounds)


def test_every_pair_runs_both_orders_twice_by_round_four_and_every_side_leads_alike():
    for first, second in PAIRS:
        orders = list(order.pair_order(first, second, range(1, 5)).values())
        assert orders.count("AB") == orders.count("BA") == 2
    for block in range(0, 24, 6):
        leads = [order.retuned_sides(r)[0] for r in range(block + 1, block + 7)]
        assert sorted(leads) == ["A", "A", "B", "B", "R", "R"]
    assert all(sorted(s) == ["A", "B", "R"] for s in order.RETUNED_CYCLE)


@pytest.mark.parametrize(("rounds", "left"), [
    (4, (0.25, 0.25, 0.0)), (6, (0.0, 0.0, 0.0)), (8, (0.0, -1 / 30, -1 / 30)),
    (12, (0.0, 0.0, 0.0))])
def test_what_a_first_process_penalty_leaves_in_each_effect(rounds, left):
    # docs/statistics.md §3 quotes this table.
    assert [order.first_process_residual(a, b, rounds) for a, b in PAIRS] == pytest.approx(left)


def test_a_pair_run_in_one_order_only_is_refused():
    with pytest.raises(BadInputError, match="one order only"):
        order.first_process_residual("A", "B", 1)


def pick(key: str, config: str, sweep: dict[str, float] | None = None) -> Pick:
    return Pick(kernel="k", tuner="m.k", key=key, config=config,
                sweep=tuple(sorted((sweep or {}).items(), key=lambda c: c[1])))


def test_a_changed_pick_is_a_near_tie_when_a_sweep_timed_both_within_the_threshold():
    first = [pick("1", "B=32", {"B=32": 1.000, "B=64": 1.005}), pick("2", "B=32", {"B=32": 1.0, "B=64": 1.3}),
             pick("3", "B=32"), pick("4", "B=32"), pick("5", "B=16")]
    second = [pick("1", "B=64", {"B=64": 0.9, "B=32": 1.1}), pick("2", "B=64", {"B=64": 0.8, "B=32": 1.1}),
              pick("3", "B=64"), pick("4", "B=32"), pick("6", "B=16")]
    got = compare_picks(first, second, threshold_pct=1.0)
    assert (got.keys, got.same, got.only_first, got.only_second) == (4, 1, 1, 1)
    by_key = {c.key: c for c in got.changed}
    assert by_key["1"].near_tie is True and by_key["1"].gap_pct == pytest.approx(0.5)
    assert by_key["2"].near_tie is False and by_key["2"].gap_pct == pytest.approx(30.0)
    assert by_key["3"].near_tie is None and by_key["3"].gap_pct is None  # no sweep timed both
    assert got.near_ties == 1
    assert (by_key["2"].first, by_key["2"].second) == ("B=32", "B=64")


def test_a_manifest_asks_for_side_r_with_a_flag(tmp_path):
    from sealed_manifests import BUILTIN_HEAD
    from zl_core.seal.manifest import ManifestError, load_manifest

    body = BUILTIN_HEAD + "  - op: add\n"
    from zl_core.seal.freeze import from_manifest

    plain = tmp_path / "plain.yaml"
    plain.write_text(body)
    assert load_manifest(plain).retuned is False
    assert "retuned" not in from_manifest(load_manifest(plain))  # a matrix without it is as before
    asked = tmp_path / "retuned.yaml"
    asked.write_text("retuned: true\n" + body)
    assert load_manifest(asked).retuned is True
    assert from_manifest(load_manifest(asked))["retuned"] is True
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("retuned: yes please\n" + body)
    with pytest.raises(ManifestError) as raised:
        load_manifest(wrong)
    assert "retuned: true or false, got 'yes please'" in raised.value.problems
