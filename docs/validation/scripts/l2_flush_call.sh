#!/usr/bin/env bash
# One device call of the L2 measurement (docs/validation/2026-12-07-l2-flush.md); carry
# .whl, .fg and .l2 (this script, l2_direct.py, l2_shapes.yaml, and .l2/whl: the zl
# wheels of the branch under test, installed over .whl's). Modelled on
# aa_campaign_call.sh: the first call on a machine installs, then starts the whole
# sequence in its own session (setsid), so it runs on between calls while the machine
# stays warm; every call waits up to $1 s (from its start) and packs the state under
# $OUT every 60 s. The sequence:
#   1. l2_direct.py: zl's graph timer warm and flushed, do_bench and do_bench_cudagraph,
#      FlagGems relu and mm in one process;
#   2. zl screen of relu and mm with DISABLE_MMA_V3 (its side A records the configs every
#      later cell replays, --replay-root);
#   3. zl ab, the switch, 4 rounds, --l2 warm; 4. the same, --l2 flush (relu's TTGIR does
#      not change: timed under --allow-no-ir-diff, it is a null A/B);
#   5. zl ab --aa, 4 rounds, --l2 warm; 6. the same, --l2 flush;
#   7. zl report --ab of a warm cell against a flushed one (refused: exit 4).
wait_s=${1:-560}
repo=$PWD
W=/tmp/l2
L=$repo/.l2
if [[ ! -f $W/started ]]; then
  source .whl/on-device.sh > /tmp/on-device.out 2>&1 || { cat /tmp/on-device.out; exit 1; }
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --force-reinstall --target /tmp/zl-site "$L"/whl/*.whl >> /tmp/on-device.out 2>&1 \
    || { cat /tmp/on-device.out; exit 1; }
  mkdir -p $W && cp /tmp/on-device.out $W/on-device.out
  cp -a .fg $W/fg
  cp "$L"/l2_direct.py "$L"/l2_shapes.yaml $W/
  export FLAGGEMS_DIR=$W/fg GEMS_VENDOR=nvidia
  export PYTHONPATH=/tmp/zl-site:$W/fg/src
  nvidia-smi > $W/nvidia-smi.txt 2>&1
  nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw,power.limit,utilization.gpu,memory.total --format=csv > $W/nvidia-smi.csv 2>&1
  python3 - > $W/versions.txt 2>&1 <<'PY'
import sys, platform, torch, triton
print("python", sys.version.split()[0], platform.platform())
print("torch", torch.__version__, "cuda", torch.version.cuda)
print("triton", triton.__version__)
p = torch.cuda.get_device_properties(0)
print("gpu", p.name, "capability", torch.cuda.get_device_capability(0), "L2_cache_size", p.L2_cache_size)
import flag_gems; print("flag_gems", getattr(flag_gems, "__version__", "?"), flag_gems.__file__)
import zl_core, zl_core.contract as c; print("zl_core", zl_core.__file__, "L2 modes", c.L2_MODES)
PY
  cp $W/fg/COMMIT $W/flaggems_commit.txt
  cat > $W/sequence.sh <<'SEQ'
cd /tmp/l2
R=/tmp/l2/runs
SH="--shape-file /tmp/l2/l2_shapes.yaml"
OPS="relu:relu:float16 mm:mm:float16"
run() {  # name, command...: its output in <name>.out/.err, a line in steps.log
  local name=$1; shift
  echo "$(date -u +%FT%TZ) start $name: $*" >> steps.log
  local t0=$SECONDS
  "$@" > $name.out 2> $name.err
  local rc=$?
  echo "$(date -u +%FT%TZ) end $name rc=$rc wall=$((SECONDS - t0))s" >> steps.log
  return $rc
}
run direct python3 -u l2_direct.py --reps 4 --replay-ms 30
run screen zl screen --no-config --switch DISABLE_MMA_V3 --ops $OPS $SH --runs-root $R
S=$(ls -d $R/screen_* | head -1)
COMMON="--no-config --ops $OPS $SH --rounds 4 --timing operator --replay-root $S --runs-root $R"
run ab_warm zl ab --switch DISABLE_MMA_V3 --allow-no-ir-diff --l2 warm $COMMON
run ab_flush zl ab --switch DISABLE_MMA_V3 --allow-no-ir-diff --l2 flush $COMMON
run aa_warm zl ab --aa --l2 warm $COMMON
run aa_flush zl ab --aa --l2 flush $COMMON
pick() {  # the first A/B campaign's mm r01/A cell whose identity says l2=$1
  python3 -c 'import glob, json, sys
for p in sorted(glob.glob(sys.argv[1] + "/ab_*/mm/r01/A/run_identity.json")):
    if json.load(open(p)).get("l2") == sys.argv[2]:
        print(p.rsplit("/", 1)[0]); break' "$R" "$1"
}
run refusal zl report --ab "$(pick warm)" "$(pick flush)"
echo done > sequence.done
SEQ
  cd $W
  setsid bash $W/sequence.sh < /dev/null > $W/sequence.log 2>&1 &
  echo started > $W/started
fi
cd $W
pack() {
  tar -czf $OUT/.state.tgz --exclude=.triton_cache --exclude=.tuner_cache --exclude='*.ttgir' \
    -C $W $(cd $W && ls -d runs *.out *.err *.log *.txt *.csv *.jsonl 2>/dev/null) && mv $OUT/.state.tgz $OUT/state.tgz
}
packed=$SECONDS
while ((SECONDS < wait_s)); do
  [[ -f $W/sequence.done ]] && break
  sleep 5
  if ((SECONDS - packed >= 60)); then pack; packed=$SECONDS; fi
done
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv,noheader
cat $W/versions.txt
cat $W/steps.log
tail -25 $W/direct.err 2>/dev/null
for f in ab_warm ab_flush aa_warm aa_flush refusal; do [[ -f $W/$f.err ]] && { echo "== $f"; tail -5 $W/$f.err; }; done
pack
ls -la $OUT
