#!/usr/bin/env bash
# The harness's own cost, measured side by side in one device call:
#   (1) a screening pair's wall time against two bare FlagGems pytest runs of the same
#       operator and flags (target: at most 1.10x);
#   (2) the plugins' effect on direct-timed small kernels: bare FlagGems --mode kernel vs
#       `zl run --timer direct`, order rotated each repetition.
# Run from the repository root after `source .whl/on-device.sh`.
# usage: harness_cost.sh [OP] [SWITCH] [REPS]     (defaults: softmax DISABLE_MMA_V3 3)
set -u
OP=${1:-softmax}; SWITCH=${2:-DISABLE_MMA_V3}; REPS=${3:-3}
R=${ZL_RUNS_ROOT:-/tmp/zlcost}; rm -rf "$R"; mkdir -p "$R"; export ZL_RUNS_ROOT=$R ZL_BACKEND=${ZL_BACKEND:-cuda}
S=$(cd "$(dirname "$0")" && pwd)
now() { python3 -c 'import time; print(f"{time.time():.3f}")'; }
bare() {  # bare VALUE LOG [OP]: FlagGems as users run it, fresh caches, the switch set to VALUE
  local t0 op=${3:-$OP}; t0=$(now)
  ( cd "$FLAGGEMS_DIR" && env "$SWITCH=$1" TRITON_CACHE_DIR="$R/tc_$RANDOM" FLAGGEMS_CACHE_DIR="$R/fc_$RANDOM" \
      python3 -m pytest -s -p no:cacheprovider "benchmark/test_$op.py::test_$op" --level core \
      --mode kernel --dtypes float16 > "$2" 2>&1 )
  echo "$(now) - $t0" | python3 -c 'import sys; a,b=sys.stdin.read().split(" - "); print(f"{float(a)-float(b):.1f}")'
}
for i in $(seq 1 "$REPS"); do
  a=$(bare 0 "$R/bare_${i}_A.log"); b=$(bare 1 "$R/bare_${i}_B.log")
  t0=$(now); zl screen --ops "$OP:$OP:float16" --switch "$SWITCH" > "$R/screen_$i.log" 2>&1; t1=$(now)
  python3 -c "a,b,z=$a,$b,$t1-$t0; print(f'rep $i: bare A {a:.1f}s + bare B {b:.1f}s = {a+b:.1f}s; zl screen pair {z:.1f}s; ratio {z/(a+b):.2f}x')"
done
echo "--- plugins' effect on direct-timed rows (rotated order)"
for i in $(seq 1 "$REPS"); do
  if (( i % 2 )); then
    bare 0 "$R/bare_add_$i.log" add > /dev/null
    zl run --op add --dtypes float16 --timer direct --out "$R/zl_add_$i" --quiet > /dev/null
  else
    zl run --op add --dtypes float16 --timer direct --out "$R/zl_add_$i" --quiet > /dev/null
    bare 0 "$R/bare_add_$i.log" add > /dev/null
  fi
done
OP=add python3 "$S/overhead.py" "$R" "$REPS"
