#!/usr/bin/env bash
# One device call (docs/validation/2026-12-07-device-occupancy.md): carry .whl, .fg and
# .occ (this script and .occ/whl, the zl wheels of the branch under test, installed over
# .whl's). An A/B campaign at the defaults of four FlagGems operators, DISABLE_MMA_V3,
# 4 rounds; at $1 s after the start (default 495) a campaign still running is
# interrupted (SIGINT, as a user's Ctrl-C) so that the call returns what it measured.
# Then the report's occupancy figure, from zl report when the campaign completed, else
# from zl_core.report.time_spent on the folder. State is packed under $OUT every 60 s.
set -u
stop_at=${1:-495}
W=/tmp/occ
mkdir -p $W
source .whl/on-device.sh > $W/on-device.out 2>&1 || { cat $W/on-device.out; exit 1; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --force-reinstall --target /tmp/zl-site .occ/whl/*.whl >> $W/on-device.out 2>&1 \
  || { cat $W/on-device.out; exit 1; }
cp -a .fg $W/fg
export FLAGGEMS_DIR=$W/fg GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1
export PYTHONPATH=/tmp/zl-site:$W/fg/src
cat $W/on-device.out
nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu,utilization.gpu,memory.total --format=csv > $W/nvidia-smi.csv 2>&1
python3 - > $W/versions.txt 2>&1 <<'PY'
import sys, platform, os, torch, triton
print("python", sys.version.split()[0], platform.platform(), "cpus", os.cpu_count())
print("torch", torch.__version__, "cuda", torch.version.cuda)
print("triton", triton.__version__)
print("gpu", torch.cuda.get_device_name(0))
import zl_core; print("zl_core", zl_core.__file__)
PY
cp $W/fg/COMMIT $W/flaggems_commit.txt
cat $W/versions.txt $W/nvidia-smi.csv
R=$W/runs
pack() {
  tar -czf $OUT/.state.tgz --exclude=.triton_cache --exclude=.tuner_cache --exclude=ttgir \
    --exclude=sweep_shards -C $W $(cd $W && ls -d runs *.out *.err *.txt *.csv *.json 2>/dev/null) \
    && mv $OUT/.state.tgz $OUT/state.tgz
}
echo "$(date -u +%FT%TZ) ab start (call at ${SECONDS}s)" | tee $W/steps.txt
t0=$SECONDS
setsid zl ab --no-config --switch DISABLE_MMA_V3 --allow-no-ir-diff --rounds 4 \
  --ops relu:relu:float16 softmax:softmax:float16 mm:mm:float16 bmm:bmm:float16 \
  --runs-root $R > $W/ab.out 2> $W/ab.err < /dev/null &
pid=$!
packed=$SECONDS
while kill -0 $pid 2>/dev/null; do
  if ((SECONDS >= stop_at)); then
    echo "$(date -u +%FT%TZ) interrupting at ${SECONDS}s" | tee -a $W/steps.txt
    kill -INT -- -$pid 2>/dev/null
    for _ in $(seq 40); do kill -0 $pid 2>/dev/null || break; sleep 1; done
    kill -KILL -- -$pid 2>/dev/null
    break
  fi
  sleep 2
  if ((SECONDS - packed >= 60)); then pack; packed=$SECONDS; fi
done
wait $pid; rc=$?
echo "$(date -u +%FT%TZ) ab end rc=$rc wall=$((SECONDS - t0))s" | tee -a $W/steps.txt
C=$(ls -d $R/ab_* | head -1)
tail -30 $W/ab.err
zl report "$C" > $W/report.txt 2>&1; echo "zl report rc=$?" | tee -a $W/steps.txt
zl report "$C" --format md > $W/report.md 2>&1
zl report "$C" --json > $W/report.json 2> $W/report.err
python3 - "$C" > $W/occupancy.txt 2>&1 <<'PY'
import json, sys
from pathlib import Path
from zl_core.interface import caliber, occupancy, phases
from zl_core.report.time_spent import time_spent
from zl_core.store.layout import CampaignLayout
c = Path(sys.argv[1])
t = time_spent(CampaignLayout(c))
json.dump(t, open("/tmp/occ/time_spent.json", "w"), indent=1)
o = t["occupancy"]
print(json.dumps({k: v for k, v in o.items() if k != "lanes"}), json.dumps(o["lanes"]))
print("phases", json.dumps(t["seconds"]), "wall", t["wall_s"])
cells = []
for ident_path in sorted(c.glob("*/r*/*/run_identity.json")):
    ident = json.loads(ident_path.read_text())
    rec = ident.get(phases.KEY) or {}
    busy = rec.get(occupancy.KEY) or {}
    own = (ident.get(phases.CELL_KEY) or {}).get(occupancy.KEY) or {}
    cells.append({"cell": str(ident_path.parent.relative_to(c)), "wall_s": rec.get("wall_s"),
                  "window": busy.get("window"), "busy_s": busy.get("seconds"),
                  "intervals": len(busy.get("intervals") or []), "bridged_s": busy.get("bridged_s"),
                  "seconds": rec.get("seconds"), "start": ident.get("start"), "rc": ident.get("rc")})
with open("/tmp/occ/cells.json", "w") as f:
    json.dump(cells, f, indent=1)
for x in cells:
    print(x["cell"], x["wall_s"], x["busy_s"], x["intervals"])
PY
cat $W/occupancy.txt
sed -n '/Device occupancy/,/^$/p;/device busy/p' $W/report.txt 2>/dev/null | head -30
pack
ls -la $OUT
