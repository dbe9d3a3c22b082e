#!/usr/bin/env bash
# Device call(s), issue 10: a FlagGems screen of 20 operators with --devices all, killed
# half-way with SIGKILL and finished with --resume, against an uninterrupted screen of
# the same operators. Run from the repository root after `source .whl/on-device.sh`.
#
# One device command may run 600 s and a FlagGems screen pair costs ~45 s on the H200
# (19 s a cell, 9 s of it importing torch and flag_gems), so a 20-operator screen
# (~15 min) does not fit one call. The work is split into phases, one per call, all
# sharing one runs root on the device's disk ($R, never emptied here):
#
#   PHASE=ref1     uninterrupted screen of OPS[0:10]              ~8 min
#   PHASE=ref2     uninterrupted screen of OPS[10:20]             ~8 min
#   PHASE=kill     screen of all 20 with --devices all; SIGKILL once KILL_AFTER
#                  operators have finished (default 10)           ~8 min
#   PHASE=resume   zl screen --resume <that campaign>             ~8 min (cut by the call
#                  limit? run PHASE=resume again: it resumes the resume)
#   PHASE=cost     the new executor against the serial path on one device, same call,
#                  side by side: 2 operators, serial / --devices all / --devices all /
#                  serial; look for "lanes/serial" <= 1.02           ~6 min
#   PHASE=compare  verdicts of the resumed screen vs ref1+ref2; no finished cell rerun,
#                  none missing; orphans and the device lock after the kill   ~10 s
#
# Total ~32 min of device time: more than one session's 30, so run ref1/ref2 in one
# session and kill/resume/compare in the next if needed (the runs root survives only
# while the machine stays warm; pack() copies every phase's folders into $OUT).
# Look for: compare prints "verdicts equal: 20/20", "finished cells rerun: 0",
# "cells missing: 0", "orphans after SIGKILL: 0", state complete, and zl report exit 0.
set -u
PHASE=${PHASE:-${1:-}}
R=${ZL_RUNS_ROOT:-/tmp/zl-resume}; mkdir -p "$R"; export ZL_RUNS_ROOT=$R
OUT=${OUT:-/tmp/zl-out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-560}
KILL_AFTER=${KILL_AFTER:-10}
export ZL_BACKEND=cuda
# 20 cheap FlagGems benchmarks (pointwise and reductions, ~45 s a pair on the H200),
# taken by name from this checkout's own inventory (zl ops) so a renamed benchmark file
# cannot break the list; float16 keeps each to one dtype. OPS_OVERRIDE="a:f:float16 ..."
# replaces the list.
PREFERRED="abs neg exp sin cos relu gelu silu sigmoid tanh rsqrt reciprocal add mul sub div
           softmax sum mean max min log pow exp2 erf sqrt"
if [ -n "${OPS_OVERRIDE:-}" ]; then OPS=($OPS_OVERRIDE); else
  OPS=($(zl ops --json | python3 -c '
import json, sys
wanted = sys.argv[1].split()
found = {o["op"]: o["op_file"] for o in json.load(sys.stdin)}
print(" ".join([f"{op}:{found[op]}:float16" for op in wanted if op in found][:20]))
' "$PREFERRED"))
fi
echo "operators (${#OPS[@]}): ${OPS[*]}"
SWITCH=(--switch DISABLE_MMA_V3 --force-switch)
pack() { tar czf "$OUT/$1.tgz" -C "$R" --exclude='*.ttgir' --exclude='.triton_cache' \
           --exclude='.tuner_cache' . 2>/dev/null; }
latest() { ls -dt "$R"/$1 2>/dev/null | head -1; }
case "$PHASE" in
  ref1|ref2)
    if [ "$PHASE" = ref1 ]; then PART=("${OPS[@]:0:10}"); else PART=("${OPS[@]:10}"); fi
    mkdir -p "$R/$PHASE"
    /usr/bin/time -f "wall %e s" timeout -s TERM "$BUDGET" \
      zl screen --ops "${PART[@]}" "${SWITCH[@]}" --devices all --runs-root "$R/$PHASE"
    echo "rc=$?"; pack "$PHASE" ;;
  kill)
    mkdir -p "$R/killed"
    zl screen --ops "${OPS[@]}" "${SWITCH[@]}" --devices all --runs-root "$R/killed" \
      > "$R/killed.log" 2>&1 &
    ZL=$!
    START=$(date +%s)
    while kill -0 $ZL 2>/dev/null; do
      C=$(latest 'killed/screen_*')
      DONE=$( [ -n "$C" ] && [ -f "$C/screen.json" ] && python3 -c \
        "import json,sys;print(len(json.load(open(sys.argv[1]))['ops']))" "$C/screen.json" || echo 0)
      if [ "$DONE" -ge "$KILL_AFTER" ]; then break; fi
      if [ $(( $(date +%s) - START )) -gt "$BUDGET" ]; then break; fi
      sleep 1
    done
    date +%s.%N > "$R/killed.at"
    kill -KILL $ZL; wait $ZL 2>/dev/null
    sleep 5
    echo "operators done when killed: $DONE"
    echo "orphans after SIGKILL: $(pgrep -f 'zl_core.cellguard|pytest.*benchmark' | wc -l)"
    pgrep -af 'zl_core.cellguard|pytest.*benchmark' || true
    C=$(latest 'killed/screen_*'); echo "campaign: $C"
    python3 -c "import json,sys;print('state:', json.load(open(sys.argv[1]))['state'])" "$C/campaign.json"
    zl report "$C"; echo "zl report on the killed screen: rc=$? (6 expected)"
    tail -5 "$R/killed.log"; pack killed ;;
  resume)
    C=$(latest 'killed/screen_*'); echo "campaign: $C"
    /usr/bin/time -f "wall %e s" timeout -s TERM "$BUDGET" zl screen --resume "$C" --devices all
    echo "rc=$? (143: cut by the call's budget; run PHASE=resume again)"; pack resumed ;;
  cost)
    PART=("${OPS[@]:0:2}")
    for MODE in serial lanes lanes serial; do
      mkdir -p "$R/cost-$MODE"
      EXTRA=(); [ "$MODE" = lanes ] && EXTRA=(--devices all)
      T0=$(date +%s.%N)
      zl screen --ops "${PART[@]}" "${SWITCH[@]}" "${EXTRA[@]}" --runs-root "$R/cost-$MODE" > /dev/null
      T1=$(date +%s.%N)
      echo "$MODE $(python3 -c "print(f'{$T1-$T0:.1f}')")" | tee -a "$R/cost.txt"
    done
    python3 -c "
import collections
t = collections.defaultdict(list)
for line in open('$R/cost.txt'):
    mode, wall = line.split(); t[mode].append(float(wall))
print(f\"serial {sum(t['serial']):.1f} s, lanes {sum(t['lanes']):.1f} s, lanes/serial {sum(t['lanes'])/sum(t['serial']):.3f}\")"
    pack cost ;;
  compare)
    C=$(latest 'killed/screen_*')
    python3 docs/validation/scripts/resume_compare.py "$C" "$(latest 'ref1/screen_*')" \
      "$(latest 'ref2/screen_*')" --killed-at "$(cat "$R/killed.at")"
    zl report "$C" > /dev/null; echo "zl report on the resumed screen: rc=$?"; pack compared ;;
  *) echo "usage: PHASE=ref1|ref2|kill|resume|cost|compare $0"; exit 2 ;;
esac
