#!/usr/bin/env bash
# Device call (issue 11, item 7): the per-side noise of graph-timed FlagGems rows across
# fresh processes, per shape, for relu, softmax and bmm (float16), from an A/A campaign
# of 6 fixed rounds (every side a fresh process, configs pinned). Run from the
# repository root after `source .whl/on-device.sh`, with FLAGGEMS_DIR set; output
# under $OUT. Run it once on the current timer ("before"); after a change to the graph
# timer's replay budget (zl_flaggems/plugins/timing.py), run it again with LABEL=after
# and compare the two noise_<label>.tsv files shape by shape.
#   LABEL   name of this run (default "before")
#   ROUNDS  rounds of the A/A campaign (default 6)
set -u
source docs/validation/scripts/_lib.sh
export ZL_BACKEND=cuda
LABEL=${LABEL:-before}; ROUNDS=${ROUNDS:-6}
step zl ab --aa --ops relu:relu:float16 softmax:softmax:float16 bmm:bmm:float16 \
  --rounds "$ROUNDS" --runs-root "$R/aa_$LABEL"
AA=$(latest "$R/aa_$LABEL" 'aa_*')
pack "noise_$LABEL"
[ -n "$AA" ] && step zl report "$AA" --json > "$OUT/report_$LABEL.json"
python3 - "$OUT/report_$LABEL.json" "$OUT/noise_$LABEL.tsv" <<'PY'
# Per shape: each side's spread across processes ((max - min) / median, %), the
# residual spread of log(A/B) per round, and the median gems latency; then the
# medians over graph-timed shapes of at least 20 us (the issue's target: <= 0.3%).
import json, statistics, sys
model = json.load(open(sys.argv[1]))
lines = ["op\tshape\ttimer\tmedian_ms\ta_spread_pct\tb_spread_pct\tsd_log_ratio_pct\tverdict"]
big = []
for row in model["rows"]:
    st = row.get("stats") or {}
    a = [x for x in row["a_ms"] if x]
    med = statistics.median(a) if a else None
    lines.append("\t".join(str(v) for v in (row["op"], row["shape"], row["timer"], med,
                 st.get("a_spread_pct"), st.get("b_spread_pct"), st.get("sd_pct"), row["verdict"])))
    if row["timer"] == "graph" and med and med >= 0.020 and st:
        big += [st["a_spread_pct"], st["b_spread_pct"]]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
if big:
    print(f"median side spread over graph-timed shapes >= 20 us: {statistics.median(big):.3f}% "
          f"({len(big) // 2} shapes)")
calls = [o for o in model["summary"]["operators"] if o["verdict"] in ("FASTER", "SLOWER", "MIXED")]
print(f"A/A operators called: {len(calls)} of {len(model['summary']['operators'])}; "
      f"{model['summary']['fdr']['text']}")
print(f"device time: {model['summary']['device_time']['text']}")
PY
echo "### done with $(( DEADLINE - $(date +%s) ))s to spare"
