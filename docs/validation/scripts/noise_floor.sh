#!/usr/bin/env bash
# Device calls (issue 11, item 7): the per-side noise of graph-timed FlagGems rows across
# fresh processes, per shape, for relu, softmax, bmm and addmm (float16), from an A/A
# campaign of fixed rounds (every side a fresh process, configs pinned), and its
# false-positive rate. Run from the repository root after
# `source docs/validation/scripts/device_env.sh` (in every call: see there why).
# The 2026-12-03 "before" figures are the same four operators, 3 rounds, on the timer
# that spent do_bench's rep across all ten replays; "after" is this script on the
# replay budget below.
#   PHASE=start    starts the A/A campaign in the background (setsid: it outlives the
#                  device command while the machine stays warm)
#   PHASE=finish   waits for it (BUDGET s at most; call again if cut), then prints per
#                  shape the spread across processes and within a cell, the medians over
#                  graph-timed shapes of at least 20 us (the target: <= 0.3%), the
#                  controls' false-positive rate and the device time; all under $OUT.
#   PHASE=ab-start / ab-finish   the same for the A/B of bmm and addmm under
#                  DISABLE_MMA_V3 (issue 11: still SLOWER under the new statistics),
#                  --rounds auto --max-rounds $MAX_ROUNDS (default 8; first look at 4)
# Every figure is written to a file under $OUT before anything is printed, and stdout
# stays short (the A/B report goes to $OUT/ab_$LABEL.txt): a device call returns only
# the tail of its output, and on 2026-12-03 a long report pushed an A/A's figures out of
# it on the one call that could still fetch them.
#   LABEL      name of this run (default "after")
#   ROUNDS     rounds (default 3, as the "before" campaign)
#   REPLAY_MS  --replay-ms for the cells (default: zl's own default)
#   AA_OPS     the A/A's operators, space-separated op specs (default: the four above)
set -u
export ZL_BACKEND=cuda
R=${ZL_RUNS_ROOT:-/tmp/zl-noise}; mkdir -p "$R"
OUT=${OUT:-/tmp/zl-out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-560}
LABEL=${LABEL:-after}; ROUNDS=${ROUNDS:-3}
OPS=(relu:relu:float16 softmax:softmax:float16 bmm:bmm:float16 addmm:addmm:float16)
[ -n "${AA_OPS:-}" ] && read -r -a OPS <<< "$AA_OPS"
EXTRA=(); [ -n "${REPLAY_MS:-}" ] && EXTRA=(--replay-ms "$REPLAY_MS")
latest() { ls -dt "$1"/$2 2>/dev/null | head -1; }
wait_for() {  # wait_for RUN PHASE: until RUN.rc exists, BUDGET s at most
  local start=$(date +%s)
  if [ ! -f "$1.log" ]; then
    echo "no run $1 on this machine (a fresh one?): start it again"; exit 4
  fi
  until [ -f "$1.rc" ]; do
    if [ $(( $(date +%s) - start )) -gt "$BUDGET" ]; then
      echo "still running after $BUDGET s: call PHASE=$2 again"; tail -3 "$1.log"; exit 3
    fi
    sleep 2
  done
}
case "${PHASE:-}" in
  start)
    mkdir -p "$R/aa_$LABEL"
    setsid bash -c 'S=$(date +%s); zl ab --aa --ops "${@:3}" --rounds "$2" --runs-root "$1" \
        > "$1.log" 2>&1; echo $? > "$1.rc"; echo "$S $(date +%s)" > "$1.wall"' \
      _ "$R/aa_$LABEL" "$ROUNDS" "${OPS[@]}" "${EXTRA[@]}" < /dev/null > /dev/null 2>&1 &
    echo "A/A $LABEL started: ${OPS[*]} ${EXTRA[*]}, $ROUNDS rounds" ;;
  finish)
    wait_for "$R/aa_$LABEL" finish
    echo "zl ab rc=$(cat "$R/aa_$LABEL.rc"), wall $(awk '{print $2-$1}' "$R/aa_$LABEL.wall") s"
    AA=$(latest "$R/aa_$LABEL" 'aa_*')
    tar czf "$OUT/noise_$LABEL.tgz" -C "$R" --exclude='*.ttgir' --exclude='.triton_cache' \
      --exclude='.tuner_cache' "aa_$LABEL" "aa_$LABEL.log" 2>/dev/null
    zl report "$AA" --json > "$OUT/report_$LABEL.json"; rc=$?; echo "zl report rc=$rc"
    [ "$rc" = 0 ] || exit "$rc"
    python3 - "$OUT/report_$LABEL.json" "$OUT/noise_$LABEL.tsv" > "$OUT/summary_$LABEL.txt" <<'PY'
# Per shape: each side's spread across processes ((max - min) / median, %), the same
# measure inside the cells (their graph replays, median over rounds), the residual
# spread of log(A/B) per round, the median gems latency; then the medians over
# graph-timed shapes of at least 20 us.
import json, statistics, sys
model = json.load(open(sys.argv[1]))
lines = ["op\tshape\ttimer\tmedian_ms\ta_spread_pct\tb_spread_pct\ta_within_pct\tb_within_pct"
         "\tsd_log_ratio_pct\tverdict"]
big, within = [], []
for row in model["rows"]:
    st = row.get("stats") or {}
    a = [x for x in row["a_ms"] if x]
    med = statistics.median(a) if a else None
    lines.append("\t".join(str(v) for v in (
        row["op"], row["shape"], row["timer"], med, st.get("a_spread_pct"), st.get("b_spread_pct"),
        row.get("a_within_pct"), row.get("b_within_pct"), st.get("sd_pct"), row["verdict"])))
    if row["timer"] == "graph" and med and med >= 0.020 and st:
        big += [st["a_spread_pct"], st["b_spread_pct"]]
        within += [v for v in (row.get("a_within_pct"), row.get("b_within_pct")) if v is not None]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
for o in model["summary"]["operators"]:
    print(f"{o['op']}: side noise {o.get('median_side_noise_pct')}, within cell "
          f"{o.get('median_within_cell_pct')}, verdict {o['verdict']}")
if big:
    print(f"median side spread over graph-timed shapes >= 20 us: {statistics.median(big):.3f}% "
          f"({len(big) // 2} shapes); within a cell "
          f"{statistics.median(within) if within else float('nan'):.3f}%")
calls = [o for o in model["summary"]["operators"] if o["verdict"] in ("FASTER", "SLOWER", "MIXED")]
print(f"A/A operators called: {len(calls)} of {len(model['summary']['operators'])}; "
      f"{model['summary']['fdr']['text']}")
print(f"device time: {model['summary']['device_time']['text']}")
PY
    tail -7 "$OUT/summary_$LABEL.txt" ;;
  ab-start)
    # Never two campaigns on one card: an A/A still running would be measured with it.
    for run in "$R"/aa_*.log; do
      [ -f "$run" ] || continue
      if [ ! -f "${run%.log}.rc" ]; then
        echo "refused: ${run%.log} is still running; finish it first"; exit 5
      fi
    done
    mkdir -p "$R/ab_$LABEL"
    setsid bash -c 'S=$(date +%s); zl ab --ops bmm:bmm:float16 addmm:addmm:float16 \
        --switch DISABLE_MMA_V3 --rounds auto --max-rounds "$2" --runs-root "$1" "${@:3}" \
        > "$1.log" 2>&1; echo $? > "$1.rc"; echo "$S $(date +%s)" > "$1.wall"' \
      _ "$R/ab_$LABEL" "${MAX_ROUNDS:-8}" "${EXTRA[@]}" < /dev/null > /dev/null 2>&1 &
    echo "A/B $LABEL started: bmm addmm ${EXTRA[*]}, auto up to ${MAX_ROUNDS:-8} rounds" ;;
  ab-finish)
    wait_for "$R/ab_$LABEL" ab-finish
    echo "zl ab rc=$(cat "$R/ab_$LABEL.rc"), wall $(awk '{print $2-$1}' "$R/ab_$LABEL.wall") s"
    AB=$(latest "$R/ab_$LABEL" 'ab_*')
    tar czf "$OUT/ab_$LABEL.tgz" -C "$R" --exclude='.triton_cache' --exclude='.tuner_cache' \
      "ab_$LABEL" "ab_$LABEL.log" 2>/dev/null
    zl report "$AB" > "$OUT/ab_$LABEL.txt"; echo "zl report rc=$?"
    zl report "$AB" --json > "$OUT/ab_$LABEL.json"
    grep -E '^(SLOWER|FASTER|NO_CHANGE|INCONCLUSIVE|MIXED) \(|rounds; median|device time used' \
      "$OUT/ab_$LABEL.txt" ;;
  *) echo "usage: PHASE=start|finish|ab-start|ab-finish $0"; exit 2 ;;
esac
