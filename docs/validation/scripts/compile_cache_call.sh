#!/usr/bin/env bash
# One device call checking A/B rounds' per-side Triton cache with real Triton (issue 44):
#   zl ab --switch DISABLE_MMA_V3 --rounds 2 --timing once --ops relu softmax (float16)
# then prints, for every cell, its round, side, cache scope and its phases (compilation,
# autotune sweep, elapsed): round 2's cells should compile from their side's round-1 cache,
# and the campaign's output names any later round whose TTGIR differs from round 1's.
# Carry .whl and .fg. Packs the campaign (caches and TTGIR left out) under $OUT.
#   $1  seconds the campaign may run (default 330)
set -u
budget=${1:-330}
source .whl/on-device.sh || exit 1
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm --format=csv,noheader
root=$(mktemp -d /tmp/zl-cc.XXXXXX)
timeout "$budget" zl ab --no-config --runs-root "$root" --switch DISABLE_MMA_V3 --allow-no-ir-diff \
  --rounds 2 --telemetry-interval 0 --timing once \
  --ops relu:relu:float16 softmax:softmax:float16 2>&1 | tail -40
echo "zl ab exit ${PIPESTATUS[0]}"
campaign=$(ls -d "$root"/ab_* | head -1)
python3 - "$campaign" <<'PY'
import json, sys
from pathlib import Path
print("cell                      cache  compile_s  autotune_s  elapsed_s")
for ident in sorted(Path(sys.argv[1]).glob("*/r*/*/run_identity.json")):
    d = json.loads(ident.read_text())
    phases = d.get("phases") or {}
    ph = {**(phases.get("seconds") or {}), "elapsed_s": phases.get("wall_s")}
    cell = ident.parent.relative_to(sys.argv[1]).as_posix()
    fmt = lambda v: "-" if v is None else f"{v:.2f}"
    print(f"{cell:25s} {d.get('compile_cache', '?'):6s} {fmt(ph.get('compilation')):>9s} "
          f"{fmt(ph.get('autotune_sweep')):>11s} {fmt(ph.get('elapsed_s')):>10s}")
PY
zl report "$campaign" 2>&1 | head -30
tar -czf "$OUT/compile_cache.tgz" --exclude=.triton_cache --exclude=.tuner_cache --exclude=.compile_cache \
  --exclude=ttgir -C "$root" .
ls -la "$OUT"
