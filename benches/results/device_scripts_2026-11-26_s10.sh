#!/usr/bin/env bash
# The device calls of the tenth session (2026-11-26), run from the repository root on the device
# machine with the release binaries carried in .device/bin (and apex-host with its plugins in
# .device/host/release). Usage on the device:
# `source benches/results/device_scripts_2026-11-26_s10.sh; call1`.
set -u
B=.device/bin
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
row() { printf '%-22s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
HOST="env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host"
# Bench lines of the example (µs, GB/s, % of its copy line), without the headers.
bench_lines() { grep -E "^(cross_entropy|layer_norm|gelu|swish|mse_loss|copy)" "$1" | sed 's/  */ /g'; }

# Call 1 (issue 14): cross-entropy forward + gradient, pipelined plan (resident blocks start the
# next item's statistics before finishing the current one) against the previous default (reread)
# and the resident plan: the self-check of every cross-entropy case under every plan; the bench
# twice (alternating binaries), 32 KiB and 64 KiB slices for the pipelined plan (experiment build
# .device/bin/nn_ops_gpu_check_x, benches/results/nn_ops_experiment_build_s10.patch: NN_OPS_SLICE
# bytes); LayerNorm bf16 variants of the experiment
# build (NN_OPS_X defines: LD_HINT 1 nc+L1::no_allocate, 2 .cs; ST_HINT 1 .cs; WB_REG weights in
# registers; NN_OPS_MIN_BLOCK); torch.compile on the same cases last, same call. (It wrote more
# files under $OUT than come back; the LayerNorm table and torch rows were kept from its output.)
call1() {
  step ce_check 400 $B/nn_ops_gpu_check --only cross_entropy
  grep -E "^checks|FAIL" "$OUT/ce_check.log" | head -20
  for r in 1 2; do
    step ce_bench_$r 200 $B/nn_ops_gpu_check --bench-only --only "cross_entropy+grad"
    step ce_bench_s32_$r 200 env NN_OPS_SLICE=32768 $B/nn_ops_gpu_check_x --bench-only --only "cross_entropy+grad bf16"
  done
  for r in 1 2; do
    for v in base LD_HINT=1 LD_HINT=2 ST_HINT=1 LD_HINT=1,ST_HINT=1 WB_REG=1; do
      x=$v; [ "$v" = base ] && x=
      step "ln_${v//[=,]/_}_$r" 120 env NN_OPS_X="$x" $B/nn_ops_gpu_check_x --bench-only --only "layer_norm bf16 batch=1 seq=8192 dim=1024"
    done
    step ln_minblock512_$r 120 env NN_OPS_MIN_BLOCK=512 $B/nn_ops_gpu_check_x --bench-only --only "layer_norm bf16 batch=1 seq=8192 dim=1024"
    step ln_minblock128_$r 120 env NN_OPS_MIN_BLOCK=128 $B/nn_ops_gpu_check_x --bench-only --only "layer_norm bf16 batch=1 seq=8192 dim=1024"
  done
  step torch_ce 400 python benches/anchors/nn_ops_torch.py --only cross_entropy
  step torch_ln 300 python benches/anchors/nn_ops_torch.py --only layer_norm
  echo "== cross-entropy + grad (µs / GB/s / % copy)"
  for f in "$OUT"/ce_bench_*.log; do echo "-- $(basename "$f")"; bench_lines "$f" | grep -v "^copy"; done
  echo "== LayerNorm bf16 1024 variants"
  for f in "$OUT"/ln_*.log; do printf '%-28s ' "$(basename "$f" .log)"; bench_lines "$f" | grep "dim=1024 " | head -1; done
  echo "== torch"
  grep -hE '^\{' "$OUT"/torch_*.log | python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    p = r.get("params") or {}
    if r["kernel"] == "copy": continue
    if r["kernel"] == "nn_ops.layer_norm" and p.get("dim") != 1024: continue
    if r["kernel"] == "nn_ops.cross_entropy" and not p.get("grad"): continue
    print(r["kernel"], r["precision"], p, r["impl"], r.get("us_per_call"), r.get("gbps"), r.get("cache"))
'
  cat "$OUT/table.txt"
}

# Call 2 (issue 13): ff_refine_apply, refine + apply of a tile as one thread-block cluster
# (branch ff-fused, .device/bin/ff_model_gpu_check_fused): the self-check of both refine paths
# (fp16/bf16/fp32; B=1 profile, B=8, tiles 32/16), then fp16 batch timing of both paths at B=1
# and B=8 in one process, twice.
call2() {
  local X=$B/ff_model_gpu_check_fused
  step ff_check 300 $X --only 'profile,B=8,tiles 32/16' --refine fused,split
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head -40
  for r in 1 2; do
    step ff_bench_$r 200 $X --bench-only --refine split,fused
    cat "$OUT/ff_bench_$r.log" | tail -12
  done
  cat "$OUT/table.txt"
}
