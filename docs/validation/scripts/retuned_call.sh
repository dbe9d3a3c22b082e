#!/usr/bin/env bash
# One device call of a re-tuned A/B campaign (issue 47; docs/validation, its write-up).
# Carry .whl and .fg (and .rt, to resume a campaign an earlier call left). Runs or resumes
#   zl ab --retuned --switch DISABLE_MMA_V3 --rounds 4 --ops mm bmm (float16)
# up to $1 seconds, then packs the campaign (caches and TTGIR left out) and its reports
# under $OUT.
#   $1  seconds the campaign may run in this call (default 540)
#   ZL_AB_EXTRA (environment) further zl ab arguments (e.g. "--pipeline 3 --timing once")
set -u
budget=${1:-540}
source .whl/on-device.sh || exit 1
grep -qx "/.rt/" .git/info/exclude 2>/dev/null || echo "/.rt/" >> .git/info/exclude 2>/dev/null
mkdir -p .rt
nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu,memory.total --format=csv > .rt/nvidia-smi.csv 2>&1
python3 -c "import torch, triton, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'gpu', torch.cuda.get_device_name(0))" > .rt/versions.txt 2>&1
cat .fg/COMMIT > .rt/flaggems_commit.txt
cat .rt/versions.txt
campaign=$(ls -d .rt/ab_* 2>/dev/null | tail -1)
if [[ -n "$campaign" ]]; then
  argv=(zl ab --resume "$campaign")
else
  # shellcheck disable=SC2206
  argv=(zl ab --no-config --runs-root .rt --retuned --switch DISABLE_MMA_V3 --rounds 4
        --telemetry-interval 0 --ops mm:mm:float16 bmm:bmm:float16 ${ZL_AB_EXTRA:-})
fi
echo "$(date -u +%FT%TZ) ${argv[*]}" | tee -a .rt/sessions.log
timeout -s INT -k 60 "$budget" "${argv[@]}" > >(tee -a .rt/ab.out) 2> >(tee -a .rt/ab.err >&2)
echo "$(date -u +%FT%TZ) rc=$?" | tee -a .rt/sessions.log
campaign=$(ls -d .rt/ab_* 2>/dev/null | tail -1)
if [[ -n "$campaign" ]]; then
  zl report "$campaign" --format md > .rt/report.md 2>&1
  zl report "$campaign" --json > .rt/report.json 2>/dev/null
fi
tar -czf "$OUT/rt.tgz" --exclude=.triton_cache --exclude=.compile_cache --exclude=.tuner_cache \
    --exclude=ttgir -C .rt . 2>/dev/null
ls -la "$OUT"
