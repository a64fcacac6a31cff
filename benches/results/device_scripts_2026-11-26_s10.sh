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

cases() { # summary.json -> one line per case: id, status, p50 us, mode/cache, GB/s, % copy, figures
  python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s.get('time_accounting') or {}
print('status', s['status'], s['counts'], 'wall', round(t.get('wall_s', 0), 1), 'sampling %', round(t.get('sampling_pct', 0), 1))
for k, c in sorted(s['benchmarks'].items()):
    tp = c.get('throughput') or {}
    h = c.get('headline'); m = (c.get('timing') or {}).get(h or '', {})
    p50 = c.get('p50_ms')
    figs = ' '.join('%s=%.4g' % (n, f.get('median', f.get('value', 0)) if isinstance(f, dict) else 0) for n, f in (c.get('figures') or {}).items())
    print('%-100s %-8s %9s %s/%s fps=%s %s %s' % (k[:100], c['status'], '%.2f' % (p50 * 1e3) if p50 else '-', h, m.get('cache', '-'),
          '%.0f' % tp['frames_per_s'] if tp.get('frames_per_s') else '-', figs[:120], (c.get('reason') or '')[:120]))
PY
}
# Call 3 (issue 13): the fused refine as the plugin's default through apex-host: Nsight Compute's
# kernel durations of one fp16 frame at B=8 and at the profile (fused), the PyTorch anchor on the
# profile's export, then `apex-host run --backends cuda --filter 'ff_model.*'` with the anchor's
# rows, in one call. Few files come back: logs are merged into call3.txt.
call3() {
  local X=$B/ff_model_gpu_check
  for s in profile B=8; do
    step ncu_${s//=/} 200 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 10 --launch-count 10 \
      --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      $X --only "$s" --refine fused
    grep -E "^  ff_|gpu__time_duration|registers_per|warps_active|dram__throughput" "$OUT/ncu_${s//=/}.log" | sed 's/(int, [^)]*)//' \
      | awk '/^  ff_/{n=$1; next} {printf "%s %s %s\n", n, $1, $NF}' | paste - - - - | awk '{print $1, "dram%", $3, "us", $6/1000, "regs", $9, "warps%", $12}'
  done
  step ff_export 200 $B/ff_model_export --out "$OUT/ff_export"
  mkdir -p "$OUT/anchor"; step ff_torch 360 env OUT="$OUT/anchor" python3 benches/anchors/ff_model_torch.py "$OUT/ff_export"
  grep -E "eager|compile|reduce|parity|frames" "$OUT/ff_torch.log" | head -16
  step ff_run 400 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir "$OUT/ff" \
    --anchor-results "$OUT/anchor/ff_model_torch.jsonl" --format apex-x-gpu
  tail -3 "$OUT/ff_run.log"
  cases "$OUT/ff/summary.json" | cut -c1-260
  grep -iE "torch" "$OUT/ff/summary.md" | head -12
  cp "$OUT/ff/summary.json" "$OUT/ff_summary.json"; cp "$OUT/ff/summary.md" "$OUT/ff_summary.md"
  cp "$OUT/anchor/ff_model_torch.jsonl" "$OUT/ff_torch.jsonl"
  rm -rf "$OUT/ff" "$OUT/ff_export" "$OUT/anchor"
  cat "$OUT"/ncu_*.log "$OUT/ff_torch.log" "$OUT/ff_export.log" "$OUT/ff_run.log" > "$OUT/call3_logs.txt"
  rm -f "$OUT"/ncu_*.log "$OUT/ff_torch.log" "$OUT/ff_export.log" "$OUT/ff_run.log"
  cat "$OUT/table.txt"
}

# The hot and cold batch figures of a run (summary.json).
hot_cold() {
  python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print('status', s['status'], s['counts'])
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('timing') or {}
    f = lambda m: ('%.2f %s' % (t[m]['stats']['p50_ms'] * 1e3, t[m].get('cache'))) if m in t else '-'
    print('%-95s %-8s batch %-18s batch_hot %-18s cold %s' % (k[:95], c['status'], f('batch'), f('batch_hot'), f('cold')))
PY
}
# Call 4 (issue 14): the seed's 2 M-element shapes (16 x 256 x 512; 4096 x 512 logits), fp32 and
# bf16, through apex-host with `--l2-hot` (batch_hot beside the DRAM-cold batch), then the torch
# anchor on the same shapes DRAM-cold and L2-hot (`--seed-small [--l2-hot]`), one call.
call4() {
  step small_run 300 $HOST run --no-build --backends cuda --l2-hot \
    --filter 'nn_ops.*/cuda/*/*batch=16,dim=512,*seq=256' --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=512' \
    --output-dir "$OUT/small"
  tail -2 "$OUT/small_run.log"
  hot_cold "$OUT/small/summary.json"
  cp "$OUT/small/summary.json" "$OUT/small_summary.json"; rm -rf "$OUT/small"
  step torch_small_cold 300 python benches/anchors/nn_ops_torch.py --seed-small
  step torch_small_hot 300 python benches/anchors/nn_ops_torch.py --seed-small --l2-hot
  for f in cold hot; do
    echo "== torch $f"
    grep -hE '^\{' "$OUT/torch_small_$f.log" | python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    if r.get("kernel", "copy") == "copy": continue
    print(r["kernel"], r["precision"], r["params"], r["impl"], "%.2f" % r["us_per_call"] if r.get("us_per_call") else r.get("error"), r.get("cache"))
'
  done
  cat "$OUT/table.txt"
}

# Call 5 (issues 14 and 13): cross-entropy's shared-memory gradient plan (branch ce-smem: the slice
# loaded once by TMA bulk copies into shared memory, statistics and gradient from there; slices of
# 32/48/64/96 KiB) — its self-check on every cross-entropy case, then the bench of every plan
# twice, alternating with the main tree's binary (reread as it is on main); then compute-sanitizer
# (racecheck, synccheck, memcheck) on ff_model's fused refine at the profile, fp16. (It ran on an
# H200 and hit the call's 600 s limit during the second smem bench: the main-tree benches after it
# and the sanitizer steps did not run. The main-tree binary was a stale build whose default was the
# pipelined plan; its `plan=reread` line is the reread plan.)
call5() {
  local S=$B/nn_ops_gpu_check_smem
  step smem_check 400 $S --only cross_entropy
  grep -E "^checks|FAIL" "$OUT/smem_check.log" | head -20
  for r in 1 2; do
    step smem_bench_$r 300 $S --bench-only --only "cross_entropy+grad"
    step main_bench_$r 200 $B/nn_ops_gpu_check --bench-only --only "cross_entropy+grad bf16"
  done
  for t in racecheck synccheck memcheck; do
    step ff_$t 100 compute-sanitizer --tool $t --print-limit 20 $B/ff_model_gpu_check --only profile --refine fused
    grep -E "ERROR SUMMARY|RESULT|^ok|^FAIL|Error|error" "$OUT/ff_$t.log" | head -8
  done
  for f in "$OUT"/smem_bench_*.log "$OUT"/main_bench_*.log; do echo "-- $(basename "$f")"; bench_lines "$f" | grep -v "^copy"; done
  cat "$OUT"/ff_*.log > "$OUT/ff_sanitizer.txt"; rm -f "$OUT"/ff_racecheck.log "$OUT"/ff_synccheck.log "$OUT"/ff_memcheck.log
  cat "$OUT/table.txt"
}

# Call 6 (issue 13): compute-sanitizer's racecheck on ff_model's fused path at the profile (fp16,
# bf16, fp32), with the last of the device time.
call6() {
  timeout 110 compute-sanitizer --tool racecheck --print-limit 10 $B/ff_model_gpu_check --only profile --refine fused > "$OUT/race.log" 2>&1
  grep -E "ERROR SUMMARY|RESULT|^ok|^FAIL|hazard|Race" "$OUT/race.log" | head -12
}
