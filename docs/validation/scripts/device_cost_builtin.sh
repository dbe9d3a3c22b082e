#!/usr/bin/env bash
# Device call: the harness's own cost (screen pair vs bare FlagGems runs), the built-in
# suite's full screen with no FlagGems checkout, and a string-valued switch.
# Run from the repository root after `source .whl/on-device.sh`; output under $OUT.
set -u
source docs/validation/scripts/_lib.sh
export ZL_BACKEND=cuda
step env ZL_RUNS_ROOT=$R/cost bash $S/harness_cost.sh softmax DISABLE_MMA_V3 2
pack
FG=$FLAGGEMS_DIR; unset FLAGGEMS_DIR
room 150 "builtin screen" && step nox -s screen -- --switch DISABLE_MMA_V3 --runs-root "$R/builtin"
pack
room 60 "string switch, builtin" && step nox -s screen -- --ops mm_f32 add --switch TRITON_F32_DEFAULT \
  --a ieee --b tf32 --runs-root "$R/f32"
pack
export FLAGGEMS_DIR=$FG
room 100 "string switch, FlagGems" && step nox -s screen -- --ops mm:mm:float32 --switch TRITON_F32_DEFAULT \
  --a ieee --b tf32 --runs-root "$R/f32fg"
pack
echo "### done with $(( DEADLINE - $(date +%s) ))s to spare"
