#!/usr/bin/env bash
# Device call: the cell contract on a real GPU (issue 13). Checks that a cell's
# run_identity.json names its device by the vendor's tool (device_name, device_uuid,
# driver_version from zl_device_identity), that the cell adds only what only it knows
# (torch/triton versions), that FlagGems' vendor comes from the provider, that a device
# the tool does not list is refused before any cell runs, and that a plain
# --compile-only takes the backend's default target.
# Run from the repository root after `source .whl/on-device.sh`; output under $OUT.
set -u
source docs/validation/scripts/_lib.sh
export ZL_BACKEND=cuda
show() {  # the identity fields this check is about
  python3 - "$1" <<'PY'
import json, sys
ident = json.load(open(sys.argv[1] + "/run_identity.json"))
for key in ("device", "device_name", "device_uuid", "driver_version", "torch_version",
            "triton_version", "flaggems_vendor", "tuner_cache", "timer", "target", "rc"):
    print(f"{key:16} {ident.get(key)!r}")
PY
}
step zl run --op softmax --dtypes float16 --out "$R/cells/builtin_softmax" --quiet
show "$R/cells/builtin_softmax"
if [ -n "${FLAGGEMS_DIR:-}" ]; then
  step zl run --suite flaggems --op softmax --dtypes float16 --out "$R/cells/fg_softmax" --quiet
  show "$R/cells/fg_softmax"
fi
echo "--- a device the tool does not list (expect a one-line refusal, no cell folder)"
step zl run --op softmax --device 99 --out "$R/cells/no_such_device" --quiet
ls "$R/cells/no_such_device" 2>&1 | head -2
room 120 "compile-only default target" && {
  # the built-in suite: a FlagGems checkout needs a device to build its inputs
  FLAGGEMS_DIR= step zl screen --ops mm --switch DISABLE_MMA_V3 --compile-only
  show "$(latest "$R" 'screen_*')/mm/A"
}
pack
echo "### done with $(( DEADLINE - $(date +%s) ))s to spare"
