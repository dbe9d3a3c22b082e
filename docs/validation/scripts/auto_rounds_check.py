"""Where `zl ab --rounds auto` would have stopped each operator of A/B (or A/A) campaigns
that ran a fixed number of rounds: the adaptive rule zl ab uses
(zl_core.campaigns.ab_task.adaptive_stop: every shape decided at a look, looks at rounds
4, 6, 8, ... up to --max-rounds 12), applied to the rounds each campaign has.

    python docs/validation/scripts/auto_rounds_check.py CAMPAIGN [CAMPAIGN ...]   # ab_* or aa_* folders
"""

import json
import sys
from pathlib import Path

from zl_core.campaigns.ab_task import RoundsPlan, adaptive_stop
from zl_core.stats.order import COUNTERBALANCED
from zl_core.store.layout import CampaignLayout

for root in map(Path, sys.argv[1:]):
    meta = json.loads((root / "campaign.json").read_text())
    ops = sorted(p.name for p in root.iterdir() if (p / "r01").is_dir())
    rounds = max(int(p.name[1:]) for p in root.glob("*/r*") if p.name[1:].isdigit())
    plan = RoundsPlan(rounds=None, max_rounds=12, allow_no_ir_diff=True, threshold_pct=1.0,
                      round_order=meta.get("round_order", COUNTERBALANCED), campaign_ops=len(ops))
    print(f"{root.name}: {len(ops)} operators, {rounds} rounds")
    for op in ops:
        said = "no look"
        for look in range(4, rounds + 1, 2):
            stop, why = adaptive_stop(CampaignLayout(root), op, look, plan)
            said = f"stops at round {look}: {why}" if stop else f"goes on at round {look}: {why}"
            if stop:
                break
        print(f"  {op:<12} {said}")
