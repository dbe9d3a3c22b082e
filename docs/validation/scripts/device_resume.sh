#!/usr/bin/env bash
# Device calls, issue 10: a FlagGems screen of 20 operators with --devices all, killed
# half-way with SIGKILL and finished with --resume, against an uninterrupted screen of
# the same operators. Run from the repository root after
# `source docs/validation/scripts/device_env.sh` (in every call: see there why).
#
# One device command may run 600 s and a 20-operator screen costs ~10 min on the H200
# (~15 s a cell, 9 s of it importing torch and flag_gems). A process that starts its
# own session (setsid) outlives the command while the machine stays warm, so:
#
#   PHASE=start    the uninterrupted reference (serial path, no --devices) starts in the
#                  background; at the same time, on the same GPU, the screen under test
#                  (--devices all) runs and is SIGKILLed once KILL_AFTER operators have
#                  finished (default 10); its --resume then starts in the background.
#                  Screen verdicts are IR verdicts, so sharing the GPU cannot move them;
#                  the reference holds its own ZL_LOCK_DIR so the two campaigns do not
#                  wait for each other's device lock (the lock is what keeps cells of
#                  any zl process of one user apart: bypassing it is this check's doing).
#   PHASE=finish   waits for both (BUDGET s at most: call it again if cut), then compares:
#                  verdicts, no finished cell rerun, none missing, zl report's exit, and
#                  zl's own cost per cell on either path (wall minus the cells' time).
#   PHASE=ref1|ref2|kill|resume|compare    the earlier one-step-per-call phases.
# Look for: "orphans after SIGKILL: 0", "verdicts equal: 20/20", "finished cells rerun: 0",
# "cells missing: 0", state complete, and "zl report on the resumed screen: rc=0".
set -u
PHASE=${PHASE:-${1:-}}
R=${ZL_RUNS_ROOT:-/tmp/zl-resume}; mkdir -p "$R"; export ZL_RUNS_ROOT=$R
OUT=${OUT:-/tmp/zl-out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-560}
KILL_AFTER=${KILL_AFTER:-10}
export ZL_BACKEND=cuda
# 20 FlagGems benchmarks (two GEMMs the switch changes, then pointwise and reductions),
# taken by name from this checkout's own inventory (zl ops) so a renamed benchmark file
# cannot break the list; float16 keeps each to one dtype. OPS_OVERRIDE="a:f:float16 ..."
# replaces the list.
PREFERRED="bmm addmm abs neg exp sin cos relu gelu silu sigmoid tanh rsqrt reciprocal add mul sub div
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
# Screen verdicts are IR verdicts: the old replay budget (10 ms a replay) keeps the timing
# part of each cell as cheap as before.
SWITCH=(--switch DISABLE_MMA_V3 --force-switch --replay-ms 10)
pack() { tar czf "$OUT/$1.tgz" -C "$R" --exclude='*.ttgir' --exclude='.triton_cache' \
           --exclude='.tuner_cache' . 2>/dev/null; }
latest() { ls -dt "$R"/$1 2>/dev/null | head -1; }
screen_until_killed() {  # the screen under test, SIGKILLed once KILL_AFTER operators are done
  zl screen --ops "${OPS[@]}" "${SWITCH[@]}" --devices all --runs-root "$R/killed" \
    > "$R/killed.log" 2>&1 &
  local zl_pid=$! start=$(date +%s) c
  DONE=0
  while kill -0 $zl_pid 2>/dev/null; do
    c=$(latest 'killed/screen_*')
    DONE=$( [ -n "$c" ] && [ -f "$c/screen.json" ] && python3 -c \
      "import json,sys;print(len(json.load(open(sys.argv[1]))['ops']))" "$c/screen.json" || echo 0)
    if [ "$DONE" -ge "$KILL_AFTER" ]; then break; fi
    if [ $(( $(date +%s) - start )) -gt "$BUDGET" ]; then break; fi
    sleep 1
  done
  date +%s.%N > "$R/killed.at"
  kill -KILL $zl_pid; wait $zl_pid 2>/dev/null
}
case "$PHASE" in
  ref1|ref2)
    if [ "$PHASE" = ref1 ]; then PART=("${OPS[@]:0:10}"); else PART=("${OPS[@]:10}"); fi
    mkdir -p "$R/$PHASE"
    /usr/bin/time -f "wall %e s" timeout -s TERM "$BUDGET" \
      zl screen --ops "${PART[@]}" "${SWITCH[@]}" --devices all --runs-root "$R/$PHASE"
    echo "rc=$?"; pack "$PHASE" ;;
  kill)
    mkdir -p "$R/killed"
    screen_until_killed
    sleep 5
    echo "operators done when killed: $DONE"
    echo "orphans after SIGKILL: $(pgrep -f 'zl_core.cells.cellguard|pytest.*benchmark' | wc -l)"
    pgrep -af 'zl_core.cells.cellguard|pytest.*benchmark' || true
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
  start)
    mkdir -p "$R/ref" "$R/killed" "$R/ref-locks"
    setsid bash -c 'S=$(date +%s.%N); ZL_LOCK_DIR="$1/ref-locks" zl screen --ops "${@:2}" \
        --runs-root "$1/ref" > "$1/ref.log" 2>&1; echo $? > "$1/ref.rc"; \
        echo "$S $(date +%s.%N)" > "$1/ref.wall"' _ "$R" "${OPS[@]}" "${SWITCH[@]}" \
      < /dev/null > /dev/null 2>&1 &
    T0=$(date +%s.%N)
    screen_until_killed
    echo "$T0 $(cat "$R/killed.at")" > "$R/killed.wall"
    sleep 5
    echo "operators done when killed: $DONE"
    echo "orphans after SIGKILL: $(pgrep -f "zl_core.cells.cellguard.*$R/killed|pytest.*$R/killed" | wc -l)"
    C=$(latest 'killed/screen_*'); echo "campaign: $C"
    python3 -c "import json,sys;print('state:', json.load(open(sys.argv[1]))['state'])" "$C/campaign.json"
    zl report "$C" > /dev/null 2> "$R/killed-report.err"
    echo "zl report on the killed screen: rc=$? (6 expected): $(tail -1 "$R/killed-report.err")"
    setsid bash -c 'S=$(date +%s.%N); zl screen --resume "$2" --devices all > "$1/resumed.log" 2>&1; \
        echo $? > "$1/resume.rc"; echo "$S $(date +%s.%N)" > "$1/resume.wall"' _ "$R" "$C" \
      < /dev/null > /dev/null 2>&1 &
    echo "resume started in the background" ;;
  finish)
    START=$(date +%s)
    until [ -f "$R/ref.rc" ] && [ -f "$R/resume.rc" ]; do
      if [ $(( $(date +%s) - START )) -gt "$BUDGET" ]; then
        echo "still running after $BUDGET s: call PHASE=finish again"; tail -2 "$R/ref.log" "$R/resumed.log"
        exit 3
      fi
      sleep 2
    done
    echo "reference rc=$(cat "$R/ref.rc"), resume rc=$(cat "$R/resume.rc")"
    C=$(latest 'killed/screen_*'); REF=$(latest 'ref/screen_*')
    python3 docs/validation/scripts/resume_compare.py "$C" "$REF" --killed-at "$(cat "$R/killed.at")"
    zl report "$C" > /dev/null; echo "zl report on the resumed screen: rc=$?"
    python3 docs/validation/scripts/executor_cost.py "serial path (reference)" "$REF" "$R/ref.wall" \
      "lanes path (killed + resumed)" "$C" "$R/killed.wall,$R/resume.wall"
    tail -3 "$R/resumed.log"; pack compared ;;
  compare)
    C=$(latest 'killed/screen_*')
    python3 docs/validation/scripts/resume_compare.py "$C" "$(latest 'ref1/screen_*')" \
      "$(latest 'ref2/screen_*')" --killed-at "$(cat "$R/killed.at")"
    zl report "$C" > /dev/null; echo "zl report on the resumed screen: rc=$?"; pack compared ;;
  *) echo "usage: PHASE=start|finish|ref1|ref2|kill|resume|cost|compare $0"; exit 2 ;;
esac
