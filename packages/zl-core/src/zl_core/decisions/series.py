"""One shape's latencies across the rounds of an A/B campaign: the series the
statistics judge, built by one rule for the adaptive stop and the report alike.

A shape's series is *main* (pooled into verdicts) only when its pair is comparable
(:data:`zl_core.decisions.pairing.OK`) in every round and every round used the same timer: a
shape timed by graph replay in one round and directly in another mixes two
instruments. A shape that fell back to direct timing on both sides in every round is
its own *fallback* segment (judged, never pooled); anything else is *incomplete*.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from zl_core.decisions.pairing import FALLBACK, OK, Key, Pair
from zl_core.store.layout import round_name

MAIN = "main"
FALLBACK_SEGMENT = "fallback"
INCOMPLETE = "incomplete"


@attrs.frozen(kw_only=True)
class ShapeSeries:
    key: Key
    rounds: tuple[int, ...]
    pairs: tuple[Pair | None, ...]  # one per round; None: no row on either side
    segment: str  # MAIN | FALLBACK_SEGMENT | INCOMPLETE
    timer: str | None  # the one timer of a main or fallback series
    reason: str  # why an incomplete or fallback series is not pooled

    @property
    def a_ms(self) -> list[float | None]:
        return [p.a.latency_ms if p and p.a else None for p in self.pairs]

    @property
    def b_ms(self) -> list[float | None]:
        return [p.b.latency_ms if p and p.b else None for p in self.pairs]

    @property
    def deltas_pct(self) -> list[float | None]:
        return [p.delta_pct if p else None for p in self.pairs]

    @property
    def a_within_pct(self) -> list[float | None]:
        """Side A's spread inside each round's cell (its graph replays)."""
        return [p.a.replay_spread_pct if p and p.a else None for p in self.pairs]

    @property
    def b_within_pct(self) -> list[float | None]:
        return [p.b.replay_spread_pct if p and p.b else None for p in self.pairs]


def shape_series(pairs_by_round: Mapping[int, Sequence[Pair]]) -> list[ShapeSeries]:
    """Every shape seen in any round, in order of first appearance, with its segment."""
    rounds = tuple(sorted(pairs_by_round))
    by_round = {r: {p.key: p for p in pairs_by_round[r]} for r in rounds}
    order: list[Key] = []
    for r in rounds:
        order += [p.key for p in pairs_by_round[r] if p.key not in order]
    out = []
    for key in order:
        got = tuple(by_round[r].get(key) for r in rounds)
        classes = [p.cls if p else None for p in got]
        timers = {p.timer for p in got if p}
        if all(c == OK for c in classes) and len(timers) == 1:
            segment, timer, reason = MAIN, timers.pop(), ""
        elif all(c == FALLBACK for c in classes):
            segment, timer = FALLBACK_SEGMENT, "direct"
            reason = "fell back to direct timing on both sides in every round; kept apart"
        else:
            segment, timer = INCOMPLETE, None
            reason = "; ".join(
                f"{round_name(r)}: {p.reason if p else 'no row on either side'}"
                for r, p in zip(rounds, got, strict=True) if p is None or p.cls != OK
            ) or "timer changed between rounds"
        out.append(ShapeSeries(key=key, rounds=rounds, pairs=got, segment=segment, timer=timer,
                               reason=reason))
    return out
