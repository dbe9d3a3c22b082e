#!/usr/bin/env bash
# One device call (issue 44; docs/validation/2026-12-08-ab-once.md): does relu's 2 GiB shape
# read 1.9% slower in the rounds whose cells do not time the torch reference, with no
# pipeline? Runs
#   zl ab --switch DISABLE_MMA_V3 --rounds 4 --timing once --pipeline 1 --ops relu (float16)
# and prints every cell's latency per shape, round by round: round 1 (reference timed)
# against rounds 2-4 (operator alone), and the campaign's notes on rounds whose TTGIR differs
# from round 1's (relu's did, 2026-12-08). Carry .whl and .fg. Packs the campaign, TTGIR
# included, under $OUT.
#   $1  seconds the campaign may run (default 170)
set -u
budget=${1:-170}
source .whl/on-device.sh >/dev/null || exit 1
root=$(mktemp -d /tmp/zl-shift.XXXXXX)
timeout -s INT "$budget" zl ab --no-config --runs-root "$root" --switch DISABLE_MMA_V3 --allow-no-ir-diff \
  --rounds 4 --telemetry-interval 0 --timing once --pipeline 1 --ops relu:relu:float16 2>&1 | grep -E 'note:|verdict|relu' | tail -12
campaign=$(ls -d "$root"/ab_* | head -1)
python3 - "$campaign" <<'PY'
import json, sys
from pathlib import Path
for f in sorted(Path(sys.argv[1]).glob("relu/r*/*/results.json")):
    rows = json.loads(f.read_text())["rows"]
    print(f.parent.relative_to(sys.argv[1]),
          " ".join(f"{r['shape_label']}={r['latency_ms'] * 1000:.2f}" for r in rows))
PY
tar -czf "$OUT/timing_plan_shift.tgz" --exclude=.triton_cache --exclude=.compile_cache \
  -C "$root" .
