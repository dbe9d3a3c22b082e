#!/usr/bin/env bash
# One device call of an A/A campaign at the default 8 rounds (carry .whl .fg, and .dev
# holding this script and, to resume on a fresh machine, state.tgz). Modelled on
# docs/validation/scripts/sealed_campaign_call.sh: the first call on a machine installs
# the wheels, copies FlagGems out of the working tree and starts `zl ab --aa` in its own
# session (setsid), so it runs on between calls while the machine stays warm; a first
# call on a fresh machine with .dev/state.tgz carried resumes that campaign instead.
# Every call waits up to $1 s (from its start) and packs the state under $OUT every 60 s.
wait_s=${1:-560}
repo=$PWD
W=/tmp/w
# GEMMs and memory-bound operators together (issue 41: noise inside a latency class).
OPS=${AA_OPS:-"bmm:bmm:float16 softmax:softmax:float16 relu:relu:float16"}
if [[ ! -f $W/started ]]; then
  source .whl/on-device.sh > /tmp/on-device.out 2>&1 || { cat /tmp/on-device.out; exit 1; }
  mkdir -p $W && cp /tmp/on-device.out $W/on-device.out
  cp -a .fg $W/fg
  export FLAGGEMS_DIR=$W/fg GEMS_VENDOR=nvidia
  export PYTHONPATH=/tmp/zl-site:$W/fg/src
  nvidia-smi > $W/nvidia-smi.txt 2>&1
  nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw,power.limit,utilization.gpu,memory.total --format=csv > $W/nvidia-smi.csv 2>&1
  python3 - > $W/versions.txt 2>&1 <<'PY'
import sys, platform, torch, triton
print("python", sys.version.split()[0], platform.platform())
print("torch", torch.__version__, "cuda", torch.version.cuda)
print("triton", triton.__version__)
print("gpu", torch.cuda.get_device_name(0), "capability", torch.cuda.get_device_capability(0))
import flag_gems; print("flag_gems", getattr(flag_gems, "__version__", "?"), flag_gems.__file__)
import zl_core; print("zl_core", getattr(zl_core, "__version__", "?"), zl_core.__file__)
PY
  cp $W/fg/COMMIT $W/flaggems_commit.txt
  cd $W
  [[ -f $repo/.dev/state.tgz ]] && tar -xzf $repo/.dev/state.tgz -C $W
  campaign=$(ls -d $W/runs/aa_* 2>/dev/null | head -1)
  n=$(date +%H%M%S)
  if [[ -n $campaign ]]; then
    cmd="zl ab --resume $campaign --runs-root $W/runs"
  else
    cmd="zl ab --aa --no-config --ops $OPS --rounds 8 --runs-root $W/runs"
  fi
  echo "$(date -u +%FT%TZ) $cmd" >> $W/commands.txt
  setsid bash -c "$cmd > $W/ab-$n.out 2> $W/ab-$n.err; echo \$? > $W/ab-$n.rc; date -u +%FT%TZ > $W/ab-$n.end" < /dev/null &
  echo $n > $W/started
fi
n=$(cat $W/started)
cd $W
pack() {
  tar -czf $OUT/.state.tgz --exclude=.triton_cache --exclude=.tuner_cache \
    -C $W runs nvidia-smi.txt nvidia-smi.csv versions.txt on-device.out flaggems_commit.txt commands.txt \
    $(cd $W && ls ab-* 2>/dev/null) && mv $OUT/.state.tgz $OUT/state.tgz
}
packed=$SECONDS
while ((SECONDS < wait_s)); do
  [[ -f $W/ab-$n.rc ]] && break
  sleep 5
  if ((SECONDS - packed >= 60)); then pack; packed=$SECONDS; fi
done
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv,noheader
cat $W/versions.txt
tail -30 $W/ab-$n.err
echo "rc: $(cat $W/ab-$n.rc 2>/dev/null)"; [[ -f $W/ab-$n.rc ]] && tail -60 $W/ab-$n.out
pack
ls -la $OUT
