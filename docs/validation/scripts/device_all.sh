#!/usr/bin/env bash
# Device validation in one call, most important first (the session's device time is
# short): one cell recorded and replayed, the FlagGems screen of the design card,
# capture fallback, preflight checks, the built-in suite's screen and A/B, a caliber
# refusal. Run from the repository root after `source .whl/on-device.sh`.
# Each step's output goes to $OUT/all.log as it runs; runs are packed at checkpoints.
set -u
BUDGET=${BUDGET:-520}; DEADLINE=$(( $(date +%s) + BUDGET ))
R=${ZL_RUNS_ROOT:-/tmp/zlv}; rm -rf "$R"; mkdir -p "$R"; export ZL_RUNS_ROOT=$R
S=docs/validation/scripts
step() { echo; echo "=== $*"; local t0=$EPOCHREALTIME; "$@"; local rc=$?; echo "--- rc=$rc wall=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$t0}")s"; }
room() { local left=$(( DEADLINE - $(date +%s) )); if (( left < $1 )); then echo "### skipped (only ${left}s left): $2"; return 1; fi; }
pack() { tar czf "$OUT/runs.tgz" -C "$R" --exclude='*.ttgir' --exclude='.triton_cache' --exclude='.tuner_cache' . 2>/dev/null; }
step python3 -c "from zl_core import plugin_host; from zl_core.cli._common import resolve_backend; print('auto-resolved backend:', resolve_backend(plugin_host(), None).name)"
export ZL_BACKEND=cuda
C=$R/cell
step zl run --op softmax --dtypes float16 --out "$C/softmax_rec" --quiet
step zl run --op softmax --dtypes float16 --replay-from "$C/softmax_rec" --out "$C/softmax_rep" --quiet
step python3 $S/cell_checks.py "$C/softmax_rec" "$C/softmax_rep"
pack
room 200 "flaggems screen" && step nox -s screen -- --ops mm:mm:float16 softmax perf_fft:fft:float16 --switch DISABLE_MMA_V3
SCR=$(ls -d $R/screen_* 2>/dev/null | head -1)
[ -n "$SCR" ] && step python3 $S/cell_checks.py "$SCR/mm/A" "$SCR/mm/B"
[ -n "$SCR" ] && step zl report "$SCR"
pack
room 40 "capture fallback" && step zl run --op nonzero --out "$C/nonzero" --quiet && \
  python3 -c "import json; d=json.load(open('$C/nonzero/results.json')); print('rows (size, timer, fallback):', [(r['size_detail'][:30], r['timer'], r['fallback']) for r in d['rows']][:4], 'markers:', d.get('markers'))" && \
  grep -m2 BENCHMARK_DIRECT_NO_CUDAGRAPH "$C/nonzero/run.log"
room 40 "preflight" && {
  step zl run --op softmax --flaggems-dir /nonexistent/FlagGems --out "$C/pf1"
  step zl run --op softmax --op-file no_such_file --out "$C/pf2"
  step zl run --op softmax --shape-file /nonexistent/shapes.yaml --out "$C/pf3"
  step zl run --op softmax --replay-from /nonexistent/cell --out "$C/pf4"
  python3 -m venv --without-pip /tmp/bare-python
  step zl run --op softmax --python /tmp/bare-python/bin/python3 --out "$C/pf5"
}
room 30 "caliber refusal" && {
  step zl run --op softmax --dtypes float16 --timer direct --replay-from "$C/softmax_rec" --out "$C/softmax_direct" --quiet
  step zl report --ab "$C/softmax_rec" "$C/softmax_direct"
}
pack
unset FLAGGEMS_DIR
room 120 "builtin screen" && step nox -s screen -- --ops mm add softmax mm_f32 --switch DISABLE_MMA_V3 --runs-root "$R/builtin"
pack
room 150 "builtin ab" && step nox -s ab -- --rounds 3 --runs-root "$R/builtin"
pack
echo "### done with $(( DEADLINE - $(date +%s) ))s to spare"
