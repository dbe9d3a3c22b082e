#!/usr/bin/env bash
# Device validation of one cell (zl run) on a real FlagGems checkout.
# Run from the repository root after `source .whl/on-device.sh` (FLAGGEMS_DIR set).
set -u
R=${ZL_RUNS_ROOT:-/tmp/zlv}/cell; rm -rf "$R"; mkdir -p "$R"
S=docs/validation/scripts
step() { echo; echo "=== $*"; local t0=$EPOCHREALTIME; "$@"; local rc=$?; echo "--- rc=$rc wall=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$t0}")s"; }
step nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv
step zl backends
step zl doctor --backend cuda
step zl telemetry --backend cuda --once
step zl run --op softmax --dtypes float16 --out "$R/softmax_rec" --quiet
step zl run --op softmax --dtypes float16 --replay-from "$R/softmax_rec" --out "$R/softmax_rep" --quiet
step python3 $S/cell_checks.py "$R/softmax_rec" "$R/softmax_rep"
step zl run --op mm --dtypes float16 --out "$R/mm_rec" --quiet
step zl run --op mm --dtypes float16 --replay-from "$R/mm_rec" --out "$R/mm_rep" --quiet
step python3 $S/cell_checks.py "$R/mm_rec" "$R/mm_rep"
step zl run --op nonzero --dtypes float16 --out "$R/nonzero" --quiet
grep -m3 BENCHMARK_DIRECT_NO_CUDAGRAPH "$R/nonzero/run.log"
python3 -c "import json,sys; d=json.load(open('$R/nonzero/results.json')); print([(r['size_detail'][:40], r['timer'], r['fallback']) for r in d['rows']][:6], d.get('markers'))"
echo; echo "=== preflight checks (each must print its named check and exit 3)"
step zl run --op softmax --flaggems-dir /nonexistent/FlagGems --out "$R/pf1"
step zl run --op softmax --op-file no_such_file --out "$R/pf2"
step zl run --op softmax --shape-file /nonexistent/shapes.yaml --out "$R/pf3"
step zl run --op softmax --replay-from /nonexistent/cell --out "$R/pf4"
python3 -m venv --without-pip /tmp/bare-python
step zl run --op softmax --python /tmp/bare-python/bin/python3 --out "$R/pf5"
echo; echo "=== harness effect on direct-timed small kernels: bare FlagGems vs zl run --timer direct, alternating"
for i in 1 2; do
  step bash -c "cd $FLAGGEMS_DIR && python3 -m pytest -s -p no:cacheprovider benchmark/test_add.py::test_add --level core --mode kernel --dtypes float16 > $R/bare_add_$i.log 2>&1"
  step zl run --op add --dtypes float16 --timer direct --out "$R/zl_add_$i" --quiet
done
python3 $S/overhead.py "$R"
