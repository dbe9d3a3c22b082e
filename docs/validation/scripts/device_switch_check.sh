#!/usr/bin/env bash
# Device call: the switch check refuses, before any cell runs, a switch that the
# cells' Triton does not read (issue 14). On the H200 with stock Triton and FlagGems:
#   1. the design card's `nox -s screen -- --ops topk` under the CUDA backend's default
#      switch FLAGTREE_RLC_ENHANCE must exit 2 within seconds, naming the switch, the
#      Triton asked and the stock switches it suggests, with no campaign folder written;
#   2. a misspelled switch must be refused naming DISABLE_MMA_V3 as a look-alike;
#   3. the same screen with --switch DISABLE_MMA_V3 must pass the check
#      ("switch check: triton ... reads DISABLE_MMA_V3 (compile-cache key)") and run.
# Run from the repository root after `source .whl/on-device.sh` (FLAGGEMS_DIR set);
# output under $OUT.
set -u
source docs/validation/scripts/_lib.sh
export ZL_BACKEND=cuda
expect_refusal() {  # expect_refusal NAME -- command...: exit 2, no campaign, one line
  local name=$1; shift 2
  local log="$OUT/$name.log" t0=$EPOCHREALTIME
  "$@" > "$log" 2>&1; local rc=$?
  local wall; wall=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$t0}")
  cat "$log"
  local campaigns; campaigns=$(ls -d "$R"/screen_* 2>/dev/null | wc -l)
  echo "--- $name: rc=$rc wall=${wall}s campaigns written=$campaigns"
  if [ "$rc" = 2 ] && [ "$campaigns" = 0 ] && grep -q "is not read by triton" "$log"; then
    echo "### $name: PASS (refused before any cell)"
  else
    echo "### $name: FAIL"
  fi
}
step zl doctor
expect_refusal default_switch -- nox -s screen -- --ops topk
expect_refusal misspelled -- nox -s screen -- --ops topk --switch DISABLE_MMA_V33
grep -q "DISABLE_MMA_V3" "$OUT/misspelled.log" && echo "### look-alike named: PASS" || echo "### look-alike named: FAIL"
room 300 "topk under a switch Triton reads" && step nox -s screen -- --ops topk --switch DISABLE_MMA_V3
pack
echo "### done with $(( DEADLINE - $(date +%s) ))s to spare"
