"""The compare report's document (``zl compare``): the answer is one table, a row per
operator and campaign, the operators whose campaigns disagree first; then the conditions
that differ (each a column, one row per campaign), those shared, a forest plot of every
operator's interval per campaign, and each campaign's provenance."""

from __future__ import annotations

from collections.abc import Mapping

from zl_report.answer import ROUNDS_ORDER
from zl_report.blocks import Block, Bullets, Heading, Para, Plot, PlotItem, Table
from zl_report.format import RATIO_NOTE, SIGN_NOTE, VERDICT_TONES, pct, ratio, span

HEADING = "Verdicts across campaigns"
#: Operators in this order of their agreement: what a reader must look at first.
AGREEMENT_ORDER = ("disagree", "undecided in some", "agree", "single")
#: The names of the conditions, as a table's headings say them.
CONDITION_NAMES = {"device": "device", "switch": "switch", "compiler": "compiler build",
                   "triton": "triton", "provider_commit": "provider commit", "date": "date",
                   "driver": "driver", "host": "host", "timer": "timer", "kind": "kind",
                   "rounds": "rounds", "threshold_pct": "threshold %"}


def _worst(op: Mapping) -> tuple:
    """An operator's sort key: its agreement, then its worst verdict and estimate."""
    judged = [e for e in op["entries"] if e["status"] == "judged"]
    ranks = [ROUNDS_ORDER.index(e["verdict"]) if e["verdict"] in ROUNDS_ORDER else len(ROUNDS_ORDER)
             for e in judged] or [len(ROUNDS_ORDER)]
    estimates = [(e.get("estimate") or {}).get("estimate_pct") for e in judged]
    low = min((x for x in estimates if isinstance(x, int | float)), default=0.0)
    agreement = op["agreement"]
    return (AGREEMENT_ORDER.index(agreement) if agreement in AGREEMENT_ORDER else len(AGREEMENT_ORDER),
            min(ranks), low, op["op"])


def ordered(operators: list[Mapping]) -> list[Mapping]:
    return sorted(operators, key=_worst)


def _verdict(entry: Mapping) -> str:
    if entry["status"] == "judged":
        return str(entry["verdict"])
    return {"skipped": "not timed", "no_report": "no report", "absent": "absent"}[entry["status"]]


def _across(op: Mapping) -> str:
    """What the campaigns say together, and what makes them incomparable, for one operator."""
    parts = [op["agreement"]]
    if op.get("ir_differs"):
        parts.append("the IR changed in some campaigns only")
    parts += op.get("incomparable") or []
    return "; ".join(parts)


def _cell(entry: Mapping) -> str:
    """One operator in one campaign: its verdict, and the estimate and interval it rests on."""
    est = entry.get("estimate") or {}
    if entry["status"] != "judged" or not est:
        return _verdict(entry)
    return (f"{entry['verdict']} {pct(est['estimate_pct'])} "
            f"({span(est.get('ci_low_pct'), est.get('ci_high_pct'))}), {ratio(est['estimate_pct'])}")


def _ir(op: Mapping) -> str:
    irs = [entry.get("ir") or "-" for entry in op["entries"]]
    return irs[0] if len(set(irs)) == 1 else " / ".join(irs)


def answer(model: Mapping) -> list[Block]:
    """A row per operator, a column per campaign (headed by the conditions that tell the
    campaigns apart), the operators whose campaigns disagree first."""
    s = model["summary"]
    labels = [c["label"] for c in model["campaigns"]]
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(
        (s.get("agreement") or {}).items(), key=lambda kv: AGREEMENT_ORDER.index(kv[0])
        if kv[0] in AGREEMENT_ORDER else len(AGREEMENT_ORDER)))
    blocks: list[Block] = [Heading(text=HEADING, level=2),
                           Para(text=f"{s['operators']} operator(s) in {s['campaigns']} campaigns: "
                                     f"{counts or 'none'}; each cell: the verdict, its estimate "
                                     "(interval) and B against A")]
    ops = ordered(model["operators"])
    rows = tuple((op["op"], *(_cell(e) for e in op["entries"]), _ir(op), _across(op)) for op in ops)
    tones = tuple("warn" if op["agreement"] == "disagree" else
                  VERDICT_TONES.get(str(next((e["verdict"] for e in op["entries"] if e["status"] == "judged"), "")))
                  for op in ops)
    blocks.append(Table(headers=("operator", *labels, "IR", "across campaigns"), rows=rows,
                        align="l" * (len(labels) + 3), tones=tones, stays=tuple(labels),
                        interactive=True))
    return blocks


def details(model: Mapping, *, brief: bool = False) -> list[Block]:
    differ = model["conditions"]["differ"]
    same = model["conditions"]["same"]
    blocks: list[Block] = [Para(text=f"{SIGN_NOTE}; {RATIO_NOTE}", tone="muted"),
                           Heading(text="Conditions", level=2)]
    if differ:
        blocks.append(Para(text="The conditions that differ between the campaigns, one column each "
                                "(a campaign's label is made of the first two):"))
        blocks.append(Table(headers=("campaign", *(CONDITION_NAMES.get(k, k) for k in differ)),
                            rows=tuple((c["label"], *(c["conditions"][k] for k in differ))
                                       for c in model["campaigns"]),
                            align="l" * (1 + len(differ)), stays=()))
    else:
        blocks.append(Para(text="The campaigns ran under the same recorded conditions."))
    if same:
        blocks.append(Para(text="the same in every campaign: " + "; ".join(
            f"{CONDITION_NAMES.get(k, k)} {v}" for k, v in same.items()), tone="muted"))
    items = []
    for op in ordered(model["operators"]):
        for c, entry in zip(model["campaigns"], op["entries"], strict=True):
            est = entry.get("estimate") or {}
            if est:
                items.append(PlotItem(label=f"{op['op']} \u00b7 {c['label']}", low=est["ci_low_pct"],
                                      high=est["ci_high_pct"], mid=est["estimate_pct"],
                                      tone=VERDICT_TONES.get(entry["verdict"])))
    if items and not brief:
        blocks.append(Plot(title="each operator's estimate and interval per campaign", items=tuple(items),
                           point_label="", mid_label="the verdict's estimate",
                           tone_label="colour: the operator's verdict in that campaign"))
    blocks.append(Heading(text="Campaigns", level=2))
    blocks.append(Bullets(items=tuple(_campaign_line(c) for c in model["campaigns"])))
    return blocks


def _campaign_line(c: Mapping) -> str:
    p = c.get("provenance") or {}
    when = f"{p.get('first_started') or '?'} to {p.get('last_finished') or '?'}"
    return (f"{c['label']}: {c['campaign']} ({c['title']}); zl {', '.join(p.get('zl_versions') or ['?'])}, "
            f"provider commit {', '.join(p.get('provider_commits') or ['not recorded'])}, "
            f"driver {', '.join(p.get('drivers') or ['not recorded'])}, cells ran {when}")
