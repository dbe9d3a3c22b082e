#!/usr/bin/env bash
# Device calls for issue 15 (multi-GPU campaigns on a real multi-GPU host), on the
# largest nvidia-h200-xN kind lent. Run from the repository root after
# `source docs/validation/scripts/device_env.sh` (in every call: see there why).
# Dask's wheels must travel in .whl for PHASE=dask (prepare-carry.sh does not fetch
# them); on this machine, before the call:
#   python3 -m pip download -q --only-binary=:all: --python-version 3.12 \
#     --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform any \
#     -d .whl 'distributed>=2023.1'
#
#   PHASE=ids     CUDA_VISIBLE_DEVICES set to a subset of the GPUs (SUBSET, default the
#                 second and the last); a screen with --devices all; nvidia-smi's compute
#                 apps sampled while it runs. Look for "GPUs used: <the subset>" and
#                 "identities: <the subset>".
#   PHASE=scale   the same OPS_COUNT operators (default 64) screened on N-1 lanes and, at
#                 the same time on the last GPU, on 1 lane; verdicts compared, wall-time
#                 ratio (target <= 1.15/(N-1)). The 1-lane side is the long one (~30 s an
#                 operator): start it with PHASE=scale and collect with PHASE=scale-finish.
#   PHASE=aa      an A/A of OPS (four operators) with every lane measuring at once, then
#                 on one lane: side noise and false positives of each (the concurrency
#                 caliber field's figure). Background; PHASE=aa-finish collects.
#   PHASE=dask    a Dask scheduler and two `zl worker`s on 127.0.0.1, each with half the
#                 GPUs; the screen of PHASE=scale's first DASK_OPS operators through
#                 --scheduler; one worker SIGKILLed once KILL_AFTER operators are done.
#                 Look for "campaign complete", reruns in dask_tasks.tsv and equal verdicts.
set -u
export ZL_BACKEND=cuda
R=${ZL_RUNS_ROOT:-/tmp/zl-multi}; mkdir -p "$R"
OUT=${OUT:-/tmp/zl-out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-540}
N=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
LAST=$((N - 1))
SWITCH=(--switch DISABLE_MMA_V3 --force-switch)
OPS_AA=(${OPS:-relu:relu:float16 softmax:softmax:float16 bmm:bmm:float16 addmm:addmm:float16})
latest() { ls -dt "$1"/$2 2>/dev/null | head -1; }
inventory() {  # the first $1 operators of this checkout, float16 where they offer it
  zl ops --json | python3 -c '
import json, sys
ops = json.load(sys.stdin)[: int(sys.argv[1])]
print(" ".join(o["op"] + ":" + o["op_file"] + (":float16" if "float16" in (o.get("dtypes") or []) else "")
               for o in ops))' "$1"
}
wait_rc() {  # wait_rc FILE...: until every FILE exists, BUDGET s at most
  local start=$(date +%s)
  for f in "$@"; do
    until [ -f "$f" ]; do
      if [ $(( $(date +%s) - start )) -gt "$BUDGET" ]; then echo "still running: call again"; exit 3; fi
      sleep 2
    done
  done
}
background() {  # background NAME ARGS...: zl ARGS in its own session; NAME.rc/.wall/.log
  local name=$1; shift
  setsid bash -c 'S=$(date +%s.%N); zl "${@:2}" > "$1.log" 2>&1; echo $? > "$1.rc"; \
      echo "$S $(date +%s.%N)" > "$1.wall"' _ "$R/$name" "$@" < /dev/null > /dev/null 2>&1 &
}
verdicts() { python3 -c '
import json, sys
print(" ".join(r["op"] + "=" + r["verdict"] for r in json.load(open(sys.argv[1]))["ops"]))' "$1/screen.json" || echo "(no verdicts)"; }
echo "GPUs: $N"
case "${PHASE:-}" in
  ids)
    SUBSET=${SUBSET:-1,$LAST}
    nvidia-smi --query-gpu=index,uuid --format=csv,noheader > "$R/uuids.csv"
    CUDA_VISIBLE_DEVICES=$SUBSET zl screen --ops ${OPS_AA[@]} "${SWITCH[@]}" --devices all \
      --runs-root "$R/ids" > "$R/ids.log" 2>&1 &
    ZL=$!
    : > "$R/apps.csv"
    while kill -0 $ZL 2>/dev/null; do
      nvidia-smi --query-compute-apps=gpu_uuid,pid --format=csv,noheader >> "$R/apps.csv" 2>/dev/null
      sleep 0.5
    done
    wait $ZL; echo "zl screen rc=$?"
    python3 - "$R/uuids.csv" "$R/apps.csv" "$(latest "$R/ids" 'screen_*')" "$SUBSET" <<'PY'
import json, pathlib, sys
index = {u.strip(): i.strip() for i, u in (l.split(",") for l in open(sys.argv[1]) if "," in l)}
used = sorted({index.get(l.split(",")[0].strip(), "?") for l in open(sys.argv[2]) if "," in l})
camp = pathlib.Path(sys.argv[3])
idents = sorted({json.loads(p.read_text())["device"] for p in camp.glob("*/*/run_identity.json")})
print(f"subset asked: {sys.argv[4]}; GPUs used (nvidia-smi compute apps): {','.join(used) or 'none seen'}; "
      f"identities: {','.join(idents)}")
PY
    tar czf "$OUT/ids.tgz" -C "$R" --exclude='*.ttgir' --exclude='.triton_cache' ids ids.log apps.csv uuids.csv ;;
  scale)
    OPS_SCALE=($(inventory "${OPS_COUNT:-64}")); echo "${#OPS_SCALE[@]} operators"
    printf '%s\n' "${OPS_SCALE[@]}" > "$R/scale_ops.txt"
    LANES=$(seq -s, 0 $((LAST - 1)))
    mkdir -p "$R/scale_n" "$R/scale_1"
    background scale_n screen --ops "${OPS_SCALE[@]}" "${SWITCH[@]}" --devices "$LANES" --runs-root "$R/scale_n"
    background scale_1 screen --ops "${OPS_SCALE[@]}" "${SWITCH[@]}" --devices "$LAST" --runs-root "$R/scale_1"
    echo "started: $LANES lanes and lane $LAST" ;;
  scale-finish)
    wait_rc "$R/scale_n.rc" "$R/scale_1.rc"
    WN=$(awk '{print $2-$1}' "$R/scale_n.wall"); W1=$(awk '{print $2-$1}' "$R/scale_1.wall")
    LN=$(( LAST ))
    echo "rc: $(cat "$R/scale_n.rc") / $(cat "$R/scale_1.rc"); wall $WN s on $LN lanes, $W1 s on 1"
    python3 -c "print(f'ratio {$WN/$W1:.3f} (target <= {1.15/$LN:.3f})')"
    A=$(verdicts "$(latest "$R/scale_n" 'screen_*')"); B=$(verdicts "$(latest "$R/scale_1" 'screen_*')")
    echo "$A" | wc -w | xargs echo "operators judged:"
    [ "$A" = "$B" ] && echo "verdicts identical" || { echo "verdicts differ:"; diff <(tr ' ' '\n' <<<"$A") <(tr ' ' '\n' <<<"$B"); }
    tar czf "$OUT/scale.tgz" -C "$R" --exclude='*.ttgir' --exclude='.triton_cache' scale_n scale_1 \
      scale_n.log scale_1.log ;;
  aa)
    mkdir -p "$R/aa_n" "$R/aa_1"
    setsid bash -c 'zl ab --aa --ops "${@:2}" --rounds 3 --devices all --runs-root "$1/aa_n" > "$1/aa_n.log" 2>&1;
        echo $? > "$1/aa_n.rc"; zl ab --aa --ops "${@:2}" --rounds 3 --devices 0 --runs-root "$1/aa_1" \
        > "$1/aa_1.log" 2>&1; echo $? > "$1/aa_1.rc"' _ "$R" "${OPS_AA[@]}" < /dev/null > /dev/null 2>&1 &
    echo "A/A on every lane, then on one, started" ;;
  aa-finish)
    wait_rc "$R/aa_n.rc" "$R/aa_1.rc"
    for side in n 1; do
      C=$(latest "$R/aa_$side" 'aa_*')
      zl report "$C" --json > "$OUT/aa_$side.json"
      python3 - "$OUT/aa_$side.json" "$side" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
ops = m["summary"]["operators"]
called = [o["op"] for o in ops if o["verdict"] in ("FASTER", "SLOWER", "MIXED")]
print(f"lanes={sys.argv[2]}: " + ", ".join(f"{o['op']} side noise {o.get('median_side_noise_pct')}" for o in ops)
      + f"; false positives {len(called)}/{len(ops)} {called}")
PY
    done ;;
  dask)
    DASK_OPS=($(head -n "${DASK_OPS:-32}" "$R/scale_ops.txt" 2>/dev/null || inventory "${DASK_OPS:-32}"))
    HALF=$((N / 2))
    setsid dask scheduler --host 127.0.0.1 --port 8786 > "$R/scheduler.log" 2>&1 < /dev/null &
    sleep 5
    CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((HALF - 1))) setsid zl worker --scheduler tcp://127.0.0.1:8786 \
      --devices all > "$R/worker1.log" 2>&1 < /dev/null &
    W1=$!
    CUDA_VISIBLE_DEVICES=$(seq -s, "$HALF" "$LAST") setsid zl worker --scheduler tcp://127.0.0.1:8786 \
      --devices all > "$R/worker2.log" 2>&1 < /dev/null &
    sleep 10
    mkdir -p "$R/dask"
    zl screen --ops "${DASK_OPS[@]}" "${SWITCH[@]}" --scheduler tcp://127.0.0.1:8786 \
      --runs-root "$R/dask" > "$R/dask.log" 2>&1 &
    ZL=$!
    START=$(date +%s)
    while kill -0 $ZL 2>/dev/null; do
      C=$(latest "$R/dask" 'screen_*')
      DONE=$( [ -n "$C" ] && [ -f "$C/screen.json" ] && python3 -c \
        "import json,sys;print(len(json.load(open(sys.argv[1]))['ops']))" "$C/screen.json" || echo 0)
      if [ "$DONE" -ge "${KILL_AFTER:-8}" ] && kill -0 $W1 2>/dev/null; then
        kill -KILL $W1; echo "worker 1 SIGKILLed after $DONE operators"
      fi
      if [ $(( $(date +%s) - START )) -gt "$BUDGET" ]; then echo "still running: see dask.log"; break; fi
      sleep 1
    done
    wait $ZL; echo "zl screen rc=$?"
    C=$(latest "$R/dask" 'screen_*')
    python3 -c "import json,sys;print('campaign', json.load(open(sys.argv[1]))['state'])" "$C/campaign.json"
    cat "$C/dask_tasks.tsv"
    echo "dask:  $(verdicts "$C")" > "$OUT/dask_verdicts.txt"
    S=$(latest "$R/scale_1" 'screen_*'); [ -n "$S" ] && echo "1 lane: $(verdicts "$S")" >> "$OUT/dask_verdicts.txt"
    cat "$OUT/dask_verdicts.txt"
    tar czf "$OUT/dask.tgz" -C "$R" --exclude='*.ttgir' --exclude='.triton_cache' dask dask.log \
      scheduler.log worker1.log worker2.log ;;
  *) echo "usage: PHASE=ids|scale|scale-finish|aa|aa-finish|dask $0"; exit 2 ;;
esac
