# Helpers for the device scripts (source it): timed steps, a time budget, and packing
# the run folders into $OUT as the call goes, so a call cut short still returns them.
#   BUDGET  seconds this call may spend (default 540: a device command runs 600 at most)
#   R       the runs root (ZL_RUNS_ROOT), emptied first
BUDGET=${BUDGET:-540}; DEADLINE=$(( $(date +%s) + BUDGET ))
R=${ZL_RUNS_ROOT:-/tmp/zlv}; rm -rf "$R"; mkdir -p "$R"; export ZL_RUNS_ROOT=$R
OUT=${OUT:-/tmp/zl-out}; mkdir -p "$OUT"
S=docs/validation/scripts
step() {
  echo; echo "=== $*"; local t0=$EPOCHREALTIME; "$@"; local rc=$?
  echo "--- rc=$rc wall=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$t0}")s"; return $rc
}
room() {
  local left=$(( DEADLINE - $(date +%s) ))
  if (( left < $1 )); then echo "### skipped (only ${left}s left): $2"; return 1; fi
}
pack() {
  tar czf "$OUT/${1:-runs}.tgz" -C "$R" --exclude='*.ttgir' --exclude='.triton_cache' \
    --exclude='.tuner_cache' . 2>/dev/null
}
latest() { ls -dt "$1"/$2 2>/dev/null | head -1; }
