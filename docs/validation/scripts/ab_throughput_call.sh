#!/usr/bin/env bash
# One device call of benchmarks/ab_throughput.py (docs/validation/2026-12-07-ab-pipeline.md).
# Carry .whl and .fg. The campaigns live in .abt/ (git-ignored, not carried), which a warm
# machine keeps between calls: each call runs or resumes each path in turn (default: once,
# the pipelined lane timing the reference in round 1 only; serial; pipelined), each up to
# what is left of the call, and packs .abt under $OUT; every call prints the comparison of
# the complete ones.
#   $1  seconds this call may spend on campaigns (default 520)
#   $2  the paths, in order (default "once serial pipelined"; also "operator":
#       --pipeline 3 --timing operator, every cell timing alike; "released": operator with
#       --gate-release tests, each cell giving the gate back before its teardown)
#   ROUNDS (environment) the campaigns' rounds (default 4)
set -u
budget=${1:-520}
paths=${2:-once serial pipelined}
start=$SECONDS
source .whl/on-device.sh || exit 1
grep -qx "/.abt/" .git/info/exclude 2>/dev/null || echo "/.abt/" >> .git/info/exclude 2>/dev/null
mkdir -p .abt
nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu,memory.total --format=csv > .abt/nvidia-smi.csv 2>&1
python3 -c "import torch, triton, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'gpu', torch.cuda.get_device_name(0))" > .abt/versions.txt 2>&1
cat .fg/COMMIT > .abt/flaggems_commit.txt
cat .abt/versions.txt .abt/nvidia-smi.csv
ARGS=(-- --switch DISABLE_MMA_V3 --allow-no-ir-diff --rounds "${ROUNDS:-4}" --telemetry-interval 0
      --ops relu:relu:float16 softmax:softmax:float16 mm:mm:float16 bmm:bmm:float16)
# relu's TTGIR stays in (small): its later rounds' dumps differed from round 1's (2026-12-08).
pack() { tar -czf "$OUT/abt.tgz" --exclude=.triton_cache --exclude=.compile_cache --exclude=.tuner_cache \
           --exclude='*/softmax/r*/*/ttgir' --exclude='*/mm/r*/*/ttgir' --exclude='*/bmm/r*/*/ttgir' \
           --exclude=autotune_records -C .abt . 2>/dev/null; }
left() { echo $(( budget - (SECONDS - start) )); }
for path in $paths; do
  l=$(left)
  if (( l < 60 )); then echo "no time left for $path"; break; fi
  echo "$(date -u +%FT%TZ) $path: up to ${l}s"
  python3 benchmarks/ab_throughput.py run --out .abt --path $path --deadline "$l" "${ARGS[@]}"
  pack
done
python3 benchmarks/ab_throughput.py compare --out .abt 2>&1 | tee .abt/compare.txt
for p in $paths; do tail -4 .abt/$p/ab.err 2>/dev/null; cat .abt/$p/sessions.log 2>/dev/null; done
pack
ls -la "$OUT"
