#!/usr/bin/env bash
# Device call (issue 12): screen FlagGems bmm/addmm/softmax under DISABLE_MMA_V3, time the
# IR_CHANGED ones with adaptive A/B rounds, render both campaigns to HTML and Markdown,
# print `zl diff` of each changed operator, and take screenshots with headless Chromium
# when it is installed (else the HTML is left for rendering elsewhere). Everything lands
# in $OUT: screen.html ab.html screen.md ab.md *.png diff_*.txt runs.tgz.
# Run from the repository root with a FlagGems checkout in $FLAGGEMS_DIR, after
# `source .whl/on-device.sh`; about 8 minutes (BUDGET=540 by default).
set -u
source docs/validation/scripts/_lib.sh
export ZL_BACKEND=cuda
: "${FLAGGEMS_DIR:?set FLAGGEMS_DIR to a FlagGems checkout}"
OPS=(bmm:bmm:float16 addmm:addmm:float16 softmax:softmax:float16)
step zl screen --ops "${OPS[@]}" --switch DISABLE_MMA_V3 --flaggems-dir "$FLAGGEMS_DIR"
SCR=$(latest "$R" 'screen_*')
pack
left=$(( DEADLINE - $(date +%s) - 70 ))  # keep 70 s for reports and screenshots
if (( left > 120 )); then
  # SIGTERM marks the campaign interrupted; its finished rounds are still reported below.
  step timeout --signal=TERM "$left" zl ab --screen "$SCR" --rounds auto --max-rounds 6
else
  echo "### skipped A/B (only ${left}s left)"
fi
AB=$(latest "$R" 'ab_*')
pack
for kind in screen ab; do
  dir=$([ "$kind" = screen ] && echo "$SCR" || echo "$AB")
  [ -n "$dir" ] || continue
  for fmt in html md; do
    step zl report "$dir" --format "$fmt" --out "$OUT/$kind.$fmt" --allow-incomplete
  done
  step zl report "$dir" --json --out "$OUT/$kind.json" --allow-incomplete
done
for op in bmm addmm softmax; do
  zl diff "$SCR" "$op" > "$OUT/diff_$op.txt" 2>&1
  zl diff "$SCR" "$op" --full > "$OUT/diff_${op}_full.txt" 2>&1
  echo "--- zl diff $op (rc=$?)"; head -12 "$OUT/diff_$op.txt"
done
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$BROWSER" ]; then
  for kind in screen ab; do
    [ -f "$OUT/$kind.html" ] || continue
    profile=$(mktemp -d)
    timeout 60 "$BROWSER" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$profile" --hide-scrollbars --window-size=1200,2400 \
      --screenshot="$OUT/$kind.png" "file://$OUT/$kind.html" >/dev/null 2>&1
    echo "--- screenshot $kind: $(stat -c %s "$OUT/$kind.png" 2>/dev/null || echo none) bytes"
    rm -rf "$profile"
  done
else
  echo "### no chromium here: render $OUT/*.html elsewhere for the screenshots"
fi
ls -la "$OUT"
echo "### done with $(( DEADLINE - $(date +%s) ))s to spare"
