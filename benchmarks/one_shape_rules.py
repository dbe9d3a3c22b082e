"""One-shape campaigns judged by two versions of the rules, verdict by verdict.

A one-shape campaign has one operator and no siblings, so the rules that changed pooling
and the campaign step (3 to 6) should judge it alike; docs/statistics.md (section 8)
keeps its one-shape tables on that ground. This script checks it:

    python benchmarks/one_shape_rules.py draw DRAWS.json 150     # this checkout's draws
    python benchmarks/one_shape_rules.py judge DRAWS.json NOW.json
    PYTHONPATH=OLD/packages/zl-core/src python benchmarks/one_shape_rules.py judge DRAWS.json OLD.json
    python benchmarks/one_shape_rules.py compare DRAWS.json NOW.json OLD.json

where OLD is an export of another commit (``git archive COMMIT packages/zl-core/src |
tar -x -C OLD``). Each of the six noise models of ``zl_core.stats.simulate.MODELS``, fixed
6, fixed 10 and adaptive <= 20 rounds, at 0, +1 and +3%, the given trials each.
"""

from __future__ import annotations

import collections
import json
import random
import sys
from pathlib import Path


def main() -> None:
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "compare":
        rows = json.loads(Path(path).read_text())
        a, b = (json.loads(Path(p).read_text()) for p in sys.argv[3:5])
        differ = collections.Counter((m, label, effect) for (m, label, effect, _), x, y
                                     in zip(rows, a["verdicts"], b["verdicts"], strict=True) if x != y)
        print(f"rules {a['rules']} against rules {b['rules']}: {len(rows)} campaigns, "
              f"{sum(differ.values())} with another verdict or stop round {dict(differ)}")
        return
    from zl_core.stats import RULES, Plan
    from zl_core.stats.simulate import MODELS, judge_operators, operator_rounds

    plans = {"fixed 6": (Plan.fixed(6), False), "fixed 10": (Plan.fixed(10), False),
             "adaptive <= 20": (Plan.adaptive(20), True)}
    if mode == "draw":
        out = []
        for m, noise in enumerate(MODELS):
            for label, (plan, _) in plans.items():
                for effect in (0.0, 1.0, 3.0):
                    rng = random.Random(1000 * m + 10 * len(label) + int(effect))
                    for _ in range(int(sys.argv[3])):
                        shapes = operator_rounds(rng, [effect], plan.max_rounds, noise, scheme=plan.round_order)
                        out.append([m, label, effect,
                                    {k: {str(r): v for r, v in by.items()} for k, by in shapes.items()}])
        Path(path).write_text(json.dumps(out))
        return
    verdicts = []
    for _, label, _, shapes in json.loads(Path(path).read_text()):
        plan, adaptive = plans[label]
        data = {"op": {k: {int(r): tuple(v) for r, v in by.items()} for k, by in shapes.items()}}
        op = judge_operators(data, plan, adaptive=adaptive).operators[0]
        verdicts.append([op.shapes[0].verdict, op.rounds_done])
    Path(sys.argv[3]).write_text(json.dumps({"rules": RULES, "verdicts": verdicts}))


if __name__ == "__main__":
    main()
