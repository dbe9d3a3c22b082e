#!/usr/bin/env bash
# One device call of the sealed campaign (carry .whl .fg .dev; .dev/manifest.yaml is
# docs/validation/data/2026-12-06-h100-sealed-partial/next-manifest.yaml). The first call on a machine sets it up, freezes
# the manifest (unless a carried state holds the frozen folder) and starts `zl ab` in its own session, so it
# runs on between calls while the machine stays warm; a call on a fresh machine with
# .dev/state.tgz (an earlier call's state) carried resumes that campaign instead. Every call then waits up to $1
# seconds from its start for the campaign and brings its state back under $OUT.
wait_s=${1:-480}
repo=$PWD
W=/tmp/w
# Only the call that starts the campaign installs the wheels: a later call's reinstall
# would rewrite zl's files under the running campaign (it only waits and packs).
if [[ ! -f $W/started ]]; then source .whl/on-device.sh >/dev/null || exit 1; fi
if [[ ! -f $W/started ]]; then
  mkdir -p $W
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  cp -a .fg $W/fg && sed "s/__GPU__/$gpu/g" .dev/manifest.yaml > $W/manifest.yaml
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv > $W/nvidia-smi.csv 2>&1
  python3 -c "import torch, triton, sys; print(sys.version.split()[0], torch.__version__, triton.__version__)" > $W/versions.txt 2>&1
  cd $W
  [[ -f $repo/.dev/state.tgz ]] && tar -xzf $repo/.dev/state.tgz -C $W
  [[ -d $W/frozen ]] || zl freeze manifest.yaml --out frozen > $W/freeze.log 2>&1
  campaign=$(ls -d $W/runs/ab_* 2>/dev/null | head -1)
  n=$(date +%H%M%S)
  if [[ -n $campaign ]]; then args=(--resume "$campaign"); else args=(--manifest frozen); fi
  setsid bash -c "zl ab ${args[*]} --runs-root $W/runs > $W/ab-$n.out 2> $W/ab-$n.err; echo \$? > $W/ab-$n.rc" < /dev/null &
  echo $n > $W/started
fi
n=$(cat $W/started)
cd $W
# Atomically: a call cut off at its limit still returns the last complete pack. A running
# cell's compile caches stay behind (a resume runs that cell afresh): the carry is 64 MiB.
pack() {
  tar -czf $OUT/.state.tgz --exclude=.triton_cache --exclude=.tuner_cache \
    -C $W runs frozen manifest.yaml nvidia-smi.csv versions.txt \
    $(cd $W && ls freeze.log ab-* 2>/dev/null) && mv $OUT/.state.tgz $OUT/state.tgz
}
# $1 counts from this script's start (set-up and freezing included), so the last pack
# ends inside the call's limit; a pack every 60 s covers a limit shorter than asked.
packed=$SECONDS
while ((SECONDS < wait_s)); do
  [[ -f $W/ab-$n.rc ]] && break
  sleep 5
  if ((SECONDS - packed >= 60)); then pack; packed=$SECONDS; fi
done
tail -25 $W/ab-$n.err
cat $W/ab-$n.rc 2>/dev/null
pack
ls -la $OUT
