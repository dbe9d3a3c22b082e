"""Every series of a campaign at every look it reached: its fit, the variance it is judged
with, and what serial correlation does to it (:mod:`.judge` reads these).

``prepared`` is :mod:`.judge`'s list of ``(op, rounds_done, series, mean)``: each
series' observations, and the operator's per-round mean with the shapes it covers. Each
series gets two variances (docs/statistics.md §3, rules 5):

- the **interval's**: its own rounds' spread, corrected for the widest serial state its
  operator's rounds allow, a state shared by the shapes included wherever they share a
  component of each round at all (:func:`zl_core.stats.shared.sharing_p`); it holds for
  the series whatever its siblings' noise;
- the **p-value's**, for the campaign step: moderated by a prior anchored on its own
  operator (:mod:`.pooling`), once with the campaign and once with its operator alone,
  the campaign's kept only where it decides more; its spread and estimate first
  corrected for a serial state of its operator or the campaign (:mod:`.serial`).
"""

from __future__ import annotations

import math

from .pooling import Pool, Pooled, Sample
from .records import Plan
from .sequential import LookStat, spending
from .serial import NONE as NO_SERIAL
from .serial import Evidence, OperatorSerial, Residuals, evidence, mean_evidence, mean_share, models, moments
from .shape_test import LookFit, fit
from .shared import shared, sharing_p
from .special import tail_quantile

SeriesId = tuple[int, object]  # (operator index, shape index or the means' class)


def look_stats(prepared: list, plan: Plan, *, mean_class: object) -> dict[int, dict[SeriesId, LookStat]]:
    """Every series at every look it reached: its variance moderated by a prior anchored on
    its own operator (pooling), widened where the class's rounds are serially correlated,
    and the campaign's answer kept only where it is at least as decided as the operator's
    alone (so company never takes a verdict away)."""
    out: dict[int, dict[SeriesId, LookStat]] = {}
    alpha = 1.0 - plan.confidence
    for look, share in zip(plan.looks, spending(plan.looks), strict=True):
        fits: dict[SeriesId, tuple[str, object, LookFit]] = {}
        for i, (op, done, series, mean_obs) in enumerate(prepared):
            if done < look:
                continue
            for j, s in enumerate(series):
                fits[(i, j)] = (op, s.cls, fit([o for o in s.obs if o.round_no <= look]))
            if mean_obs is not None:
                fits[(i, mean_class)] = (op, mean_class, fit([o for o in mean_obs[0] if o.round_no <= look]))
        if not fits:
            continue
        usable = {k: v for k, v in fits.items() if v[2].supported and v[2].df >= 1}
        serial = _serial(prepared, usable, mean_class)
        wide = _serial(prepared, usable, mean_class, sharing=True)
        samples = {k: _sample(op, k[1], cls, f, serial[k]) for k, (op, cls, f) in usable.items()}
        pool = Pool((sample for sample, _ in samples.values()), mean_class=mean_class)
        level = 1.0 - alpha * share / 2.0
        stats: dict[SeriesId, LookStat] = {}
        for k, (_, _, f) in fits.items():
            if k not in usable:
                stats[k] = LookStat(fit=f, var=math.nan, df=0, variance="none")
                continue
            sample, widen = samples[k]
            chosen, source = _choose(pool.moderate(sample), pool.moderate(sample, alone=True), f, level)
            notes = [chosen.note] if chosen.note else []
            if widen > 1.0:
                model = serial[k][0]
                where = "its operator's rounds" if model.source == "operator" else "the campaign's rounds"
                notes.append(f"{where} are serially correlated (rho {model.rho:.2f}, "
                             f"{serial[k][1]:.0%} of the variance in the shared state): its "
                             f"interval is widened by x{math.sqrt(widen):.2f}")
            own, own_widen = _sample(sample.op, k[1], sample.cls, f, wide[k])
            if own_widen > widen:
                model = wide[k][0]
                notes.append(f"its shapes share part of the noise of each round: read as a slow state "
                             f"(rho {model.rho:.2f}), its interval is widened by "
                             f"x{math.sqrt(own_widen):.2f}")
            stats[k] = LookStat(fit=f, var=max(chosen.var, f.tie_var), df=chosen.df,
                                variance=source if chosen.df > sample.df else "own",
                                serial_factor=widen, notes=tuple(notes),
                                ci_var=max(own.s2, f.tie_var), ci_df=own.df, ci_serial_factor=own_widen)
        out[look] = stats
    return out


def _choose(campaign: Pooled, alone: Pooled, f, level: float) -> tuple[Pooled, str]:
    """The campaign's variance where its interval is narrower than the operator's alone
    and rests on no fewer degrees of freedom (then its p-values are no larger at any level
    that could decide), else the operator's alone."""
    def half(p: Pooled) -> float:
        return tail_quantile(level, p.df) * math.sqrt(max(p.var, f.tie_var))

    if campaign.df >= alone.df and half(campaign) < half(alone):
        return campaign, "campaign"
    return alone, "operator"


def _serial(prepared: list, usable: dict, mean_class: object, *, sharing: bool = False
            ) -> dict[SeriesId, tuple[OperatorSerial, float]]:
    """Each usable series' serial model and the shared state's share of its variance:
    fitted on its operator's own shapes and mean, or the campaign's where all operators
    together show a correlated state (serial.models); with ``sharing``, also read as a slow
    state wherever the operator's shapes share a component of each round (the interval's)."""
    members: dict[int, list[SeriesId]] = {}
    evidence_of: dict[int, tuple[Evidence | None, Evidence | None]] = {}
    shared_p: dict[int, float] = {}
    for i, (_, _, series, mean_obs) in enumerate(prepared):
        keys: list[SeriesId] = [(i, j) for j in range(len(series)) if (i, j) in usable]
        if not keys:
            continue
        fits = [usable[k][2] for k in keys]
        measured = shared([(f.rounds, f.residuals) for f in fits])
        shapes = evidence([Residuals(rounds=f.rounds, orders=f.orders, e=f.residuals) for f in fits],
                          measured.r, measured.r2)
        mean = None
        if (i, mean_class) in usable:
            f = usable[(i, mean_class)][2]
            mean = mean_evidence(Residuals(rounds=f.rounds, orders=f.orders, e=f.residuals),
                                 mean_obs[1], measured.r)
        evidence_of[i] = (shapes, mean)
        members[i] = keys
        if sharing:
            shared_p[i] = sharing_p([(f.rounds, f.residuals) for f in fits])
    fitted = models(evidence_of, sharing=shared_p if sharing else None)
    out: dict[SeriesId, tuple[OperatorSerial, float]] = {}
    for i, keys in members.items():
        model = fitted[i]
        for k in keys:
            out[k] = (model, model.lam)
        if (i, mean_class) in usable:
            out[(i, mean_class)] = (model, mean_share(model.lam, prepared[i][3][1]))
    for k in usable:
        out.setdefault(k, (NO_SERIAL, 1.0))
    return out


def _sample(op: str, key: object, cls: object, f, serial: tuple[OperatorSerial, float]
            ) -> tuple[Sample, float]:
    """The series' spread as the pool sees it, and how much serial correlation widens its
    estimate's variance: under a correlated state the residuals understate sigma^2 and
    carry fewer degrees of freedom (serial.moments)."""
    model, lam = serial
    if model.rho <= 0.0 or lam <= 0.0:
        return Sample(op=op, key=key, cls=cls, s2=f.own_var, df=f.df, rounds=f.rounds,
                      residuals=f.residuals), 1.0
    m = moments(f.rounds, f.orders, model.rho, lam)
    return Sample(op=op, key=key, cls=cls, s2=max(f.sse / m.tr_ms, f.tie_var), df=m.df,
                  rounds=f.rounds, residuals=f.residuals), max(1.0, m.widen)
