#!/usr/bin/env bash
# Device call: the design card's screen on FlagGems, the A/B that follows it, the
# misspelled switch, and a caliber refusal on real cells (issues 3 and 4).
# Run from the repository root after `source .whl/on-device.sh`; output under $OUT.
set -u
source docs/validation/scripts/_lib.sh
export ZL_BACKEND=cuda
OPS=(mm:mm:float16 softmax perf_fft:fft:float16)
step nox -s screen -- --ops "${OPS[@]}" --switch DISABLE_MMA_V3
SCR=$(latest "$R" 'screen_*')
step python3 $S/cell_checks.py "$SCR/mm/A" "$SCR/mm/B"
step python3 $S/cell_checks.py "$SCR/softmax/A" "$SCR/softmax/B"
pack
room 200 "ab after the screen" && {
  step nox -s ab -- --rounds 3
  AB=$(latest "$R" 'ab_*')
  step zl report "$AB"
  echo "--- status.tsv"; cat "$AB/status.tsv"
  echo "--- telemetry.tsv (first and last rows, row count)"; head -3 "$AB/telemetry.tsv"
  tail -2 "$AB/telemetry.tsv"; wc -l < "$AB/telemetry.tsv"
}
pack
room 40 "caliber refusal" && {
  step zl run --op softmax --dtypes float16 --timer direct --replay-from "$SCR/softmax/A" \
    --out "$R/cells/softmax_direct" --quiet
  step zl report --ab "$SCR/softmax/A" "$R/cells/softmax_direct"
}
room 150 "misspelled switch" && {
  mkdir -p "$R/misspelled"
  # Refused before any cell (the Triton asked does not read it), then run anyway.
  step nox -s screen -- --ops "${OPS[@]}" --switch DISABLE_MMA_V33 --runs-root "$R/misspelled"
  step nox -s screen -- --ops "${OPS[@]}" --switch DISABLE_MMA_V33 --force-switch --runs-root "$R/misspelled"
}
pack
echo "### done with $(( DEADLINE - $(date +%s) ))s to spare"
