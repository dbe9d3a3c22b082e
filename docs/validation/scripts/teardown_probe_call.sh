#!/usr/bin/env bash
# One device call (issue 44; docs/validation/2026-12-08-ab-once.md): what a cell's 1.1-1.8 s
# of teardown, inside a pipelined cell's hold of the timing gate, is spent on. Runs a screen
# of relu and mm (float16) with scripts/teardown_probe.py loaded into every cell
# (PYTEST_ADDOPTS), which profiles each cell from its first pytest_sessionfinish to its last
# pytest_unconfigure; prints each cell's teardown seconds and top calls, packs them under
# $OUT. Carry .whl and .fg.
#   $1  seconds the screen may run (default 200)
set -u
budget=${1:-200}
source .whl/on-device.sh >/dev/null || exit 1
root=$(mktemp -d /tmp/zl-probe.XXXXXX)
export PYTHONPATH="$PWD/docs/validation/scripts${PYTHONPATH:+:$PYTHONPATH}"
export PYTEST_ADDOPTS="-p teardown_probe"
export ZL_TEARDOWN_PROBE_DIR="$root/probe"
timeout -s INT "$budget" zl screen --no-config --runs-root "$root" --switch DISABLE_MMA_V3 \
  --ops relu:relu:float16 mm:mm:float16 2>&1 | tail -4
for f in "$root"/probe/*.txt; do head -24 "$f"; echo; done
tar -czf "$OUT/teardown_probe.tgz" -C "$root" probe
