#!/usr/bin/env bash
# Device call: issue 6's verdicts on the built-in suite (fast cells, no FlagGems):
# adaptive rounds on the fp16 GEMM, an A/A campaign on three operators, and a fixed
# 6-round GEMM A/B. Run from the repository root after `source .whl/on-device.sh`.
set -u
source docs/validation/scripts/_lib.sh
export ZL_BACKEND=cuda; unset FLAGGEMS_DIR
step zl ab --ops mm:mm:float16 --switch DISABLE_MMA_V3 --rounds auto --max-rounds 12 --runs-root "$R/adaptive"
pack
room 150 "aa" && step zl ab --aa --ops add:add:float16 softmax:softmax:float16 layer_norm:layer_norm:float16 \
  --rounds auto --max-rounds 6 --runs-root "$R/aa"
pack
room 150 "fixed 6 rounds" && step zl ab --ops mm:mm:float16 --switch DISABLE_MMA_V3 --rounds 6 --runs-root "$R/fixed"
pack
echo "### done with $(( DEADLINE - $(date +%s) ))s to spare"
