#!/usr/bin/env bash
# The device calls of the eighth session (2026-11-26), run from the repository root on the device
# machine with the release binaries carried in .device/bin (and apex-host with its plugins in
# .device/host/release). Usage on the device:
# `source benches/results/device_scripts_2026-11-26_s8.sh; call1`.
set -u
B=.device/bin
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
row() { printf '%-14s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
HOST="env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host"
# The run's phase totals, then the N cases that took longest with their phases (summary.json).
slowest_phases() {
  python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("totals:", {k: round(v, 2) for k, v in (s.get("time_accounting") or {}).get("phases_s", {}).items()})
rows = []
for cid, c in s["benchmarks"].items():
    ph = (c.get("protocol") or {}).get("phases_s") or {}
    rows.append((sum(ph.values()), cid, ph))
rows.sort(key=lambda r: -r[0])
for t, cid, ph in rows[:int(sys.argv[2])]:
    print(f"{t:6.2f}s {cid[:110]}")
    print("        " + " ".join(f"{k}={v:.2f}" for k, v in sorted(ph.items(), key=lambda kv: -kv[1])))
PY
}
# Call 1 (issue 15): CG's x step deferred to the next iteration's direction pass (9 words a point
# per iteration instead of 10). The Poisson self-check and bench of this tree; then the 256^3
# profiles of b30b791 (before) and of this tree, alternating; then the CG cases through apex-host
# (not run: a shell function cannot run under timeout). Call 2 (the warm machine): Nsight Compute
# on the two CG kernels of the launch path at 256^3 (direction 200 us, 84 % of its stalls on
# load latency; update 73 us).
call1() {
  step poisson 240 $B/poisson_gpu_check --bench
  grep -E "^(FAIL|RESULT|checks)|fail" "$OUT/poisson.log" | head -20
  grep -E "^bench" "$OUT/poisson.log" | grep -v "zch\|/SM" | cut -c7-150
  for r in 1 2; do
    step old256_$r 120 $B/poisson_gpu_check_b30b791 --only '256^3'
    step new256_$r 120 $B/poisson_gpu_check --only '256^3'
  done
  for f in old256_1 new256_1 old256_2 new256_2; do
    grep -E "^bench (cg|mg|mgpcg) 256" "$OUT/$f.log" | grep -v "/SM" | cut -c7-118 | sed "s/^/$f /"
  done
  step apex_cg 300 $HOST run --no-build --backends cuda --filter 'poisson.cg/*' --output-dir "$OUT/apex_cg"
  tail -25 "$OUT/apex_cg.log"
  cat "$OUT/table.txt"
}
# Call 3 (issue 15): the direction pass with its DRAM loads one plane ahead (78 registers, 3
# blocks per SM) and the update pass four elements a thread; `_lb4` is the same with
# __launch_bounds__(256, 4) on cg_direction (64 registers). 256^3 profiles of the three binaries,
# alternating; Nsight Compute of both kernels; the self-check; the CG cases through apex-host.
call3() {
  for r in 1 2; do
    step old256_$r 120 $B/poisson_gpu_check_b30b791 --only 'cg 256^3'
    step new256_$r 120 $B/poisson_gpu_check --only '256^3'
    step lb4_256_$r 120 $B/poisson_gpu_check_lb4 --only 'cg 256^3'
  done
  for f in old256_1 new256_1 lb4_256_1 old256_2 new256_2 lb4_256_2; do
    grep -E "^bench (cg|mg|mgpcg) 256" "$OUT/$f.log" | grep -v "/SM" | cut -c7-118 | sed "s/^/$f /"
  done
  step ncu 200 ncu --kernel-name regex:'cg_direction|cg_update' --launch-skip 10 --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats $B/poisson_gpu_check --only 'cg 256^3 seed cap [launches]'
  grep -E "cg_direction|cg_update|Duration|DRAM Throughput|L2 Hit|Achieved Occupancy|Registers Per|Warp Cycles Per Issued" "$OUT/ncu.log"
  step poisson 240 $B/poisson_gpu_check
  grep -E "^(FAIL|RESULT|checks)|fail" "$OUT/poisson.log" | head -20
  step apex_cg 300 $HOST run --no-build --backends cuda --filter 'poisson.cg/*' --output-dir "$OUT/apex_cg"
  tail -25 "$OUT/apex_cg.log"
  cat "$OUT/table.txt"
}
# Call 4 (issues 15 and 10): the Poisson self-check and bench of the committed tree (7908faa), the
# whole Poisson suite through apex-host; then for issue 10: what a CUDA graph's kernel node costs
# back to back (benches/probes/graph_node_gap.cu, built here with nvcc), calibrate, and the
# tile_ops quick suite with its per-case phases.
call4() {
  step poisson 300 $B/poisson_gpu_check --bench
  grep -E "^(FAIL|RESULT|checks)|fail" "$OUT/poisson.log" | head -20
  grep -E "^bench" "$OUT/poisson.log" | grep -v "zch\|/SM" | cut -c7-150
  step apex_poisson 400 $HOST run --no-build --backends cuda --filter 'poisson.*' --output-dir "$OUT/apex_poisson"
  tail -32 "$OUT/apex_poisson.log"
  step nvcc 120 nvcc -O3 -arch=sm_90 -o "$OUT/graph_node_gap" benches/probes/graph_node_gap.cu
  step gap 120 "$OUT/graph_node_gap"
  cat "$OUT/gap.log"; rm -f "$OUT/graph_node_gap"
  step calibrate 200 $HOST calibrate
  cat "$OUT/calibrate.log"
  cp "$OUT/apex_poisson/summary.md" "$OUT/apex_poisson_summary.md"; rm -rf "$OUT/apex_poisson"
  step tile_quick 300 $HOST run --no-build --backends cuda --quick --filter 'tile_ops.*' --output-dir "$OUT/tile_quick"
  tail -6 "$OUT/tile_quick.log"
  slowest_phases "$OUT/tile_quick/summary.json" 12
  cp "$OUT/tile_quick/summary.json" "$OUT/tile_quick_summary.json"; rm -rf "$OUT/tile_quick"
  cat "$OUT/table.txt"
}
# Call 5 (issue 10): calibrate's metronome at 1 us. Call 4's probe showed an empty graph node at
# 0.79 us, and the paced kernel falling behind at 1 us by 0.27 us a call: the probe again with a
# paced kernel whose call count is a fire-and-forget atomic, and a slotted one with no load.
call5() {
  step nvcc 120 nvcc -O3 -arch=sm_90 -o "$OUT/graph_node_gap" benches/probes/graph_node_gap.cu
  step gap 120 "$OUT/graph_node_gap"
  cat "$OUT/gap.log"; rm -f "$OUT/graph_node_gap"
  cat "$OUT/table.txt"
}
# Call 7 (issue 10): tile_ops with its check's inputs regenerated into the setup's buffers, the
# outputs poisoned by a device memset and downloaded straight into the host buffers: the GPU
# self-check, then the quick suite with its phases, gated against baselines/gpu-h100.json.
call7() {
  step tile_check 200 $B/tile_ops_gpu_check
  grep -E "^(RESULT|checks)|FAIL" "$OUT/tile_check.log" | head -5
  step tile_quick 300 $HOST run --no-build --backends cuda --quick --filter 'tile_ops.*' --compare auto --output-dir "$OUT/tile_quick"
  grep -E "gating|checks:|measuring|case\(s\) in|gate:" "$OUT/tile_quick.log" | head -8
  slowest_phases "$OUT/tile_quick/summary.json" 6
  cp "$OUT/tile_quick/summary.md" "$OUT/tile_quick_summary.md"; rm -rf "$OUT/tile_quick"
  cat "$OUT/table.txt"
}
# Call 8 (issue 14): a fourth LayerNorm schedule, the prefetching wave with one warp per row
# (statistics by warp shuffles, no block barrier): the nn_ops self-check (every schedule), the
# LayerNorm bench and the torch anchor in one call; (issue 15) the Poisson 64^3 profiles after
# cg_resident's halo columns load through one function.
call8() {
  step nn_check 200 $B/nn_ops_gpu_check
  grep -E "^(checks|RESULT)|FAIL" "$OUT/nn_check.log" | head -10
  step nn_ln 150 $B/nn_ops_gpu_check --bench --only layer_norm
  grep -E "^(checks|RESULT|bench copy)|FAIL" "$OUT/nn_ln.log" | head -20
  grep -E "^layer_norm" "$OUT/nn_ln.log" | cut -c1-130
  step torch_ln 200 python3 benches/anchors/nn_ops_torch.py --only layer_norm
  python3 - "$OUT/torch_ln.log" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    if r.get('kernel') != 'nn_ops.layer_norm': continue
    p = r['params']
    print('%-13s %-5s %4s x %-5s %9s %s' % (r['impl'], r['precision'], p.get('seq'), p.get('dim'), r.get('us_per_call'), r.get('cache')))
PY
  step poisson64 200 $B/poisson_gpu_check --only '64^3'
  grep -E "^bench" "$OUT/poisson64.log" | grep -v "zch\|/SM" | cut -c7-120
  cat "$OUT/table.txt"
}
# Call 9: the final tree (65319fa): the Poisson, nn_ops and tile_ops GPU self-checks, calibrate, and
# the tile_ops quick suite gated against baselines/gpu-h100.json.
call9() {
  for p in poisson nn_ops tile_ops; do
    step $p 300 $B/${p}_gpu_check
    grep -E "^(checks|RESULT)|FAIL" "$OUT/$p.log" | head -5
  done
  step calibrate 200 $HOST calibrate
  grep -E "^(batch|cold)  *paced" "$OUT/calibrate.log"
  step tile_quick 300 $HOST run --no-build --backends cuda --quick --filter 'tile_ops.*' --compare auto --output-dir "$OUT/tile_quick"
  grep -E "gating|checks:|measuring|case\(s\) in|gate:" "$OUT/tile_quick.log" | head -8
  rm -rf "$OUT/tile_quick"
  cat "$OUT/table.txt"
}
# Call 10 (issue 14): Nsight Compute on LayerNorm bf16 8192 x 1024, ours (the default schedule,
# first launches of the bench) against torch.compile's Triton kernel (benches/probes/
# ln_compile_probe.py), same sections, base clocks, caches flushed before each kernel.
call10() {
  local S="--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
  step ncu_ours 200 ncu --kernel-name layer_norm --launch-count 2 $S $B/nn_ops_gpu_check --bench-only --only dim=1024
  step ncu_compile 300 ncu --kernel-name regex:triton --launch-skip 3 --launch-count 2 $S python3 benches/probes/ln_compile_probe.py --rows 8192 --dim 1024
  for f in ncu_ours ncu_compile; do
    echo "== $f"
    grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput  |L1/TEX Hit|L2 Hit|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Warp Cycles Per Issued|Eligible Warps|Issued Warp|No Eligible|Dynamic Shared|Static Shared" "$OUT/$f.log" | head -40
    grep -E "stalled waiting|This stall type" "$OUT/$f.log" | head -6
  done
  cat "$OUT/table.txt"
}
# Call 11 (issue 14): call 10 found ours and torch.compile's LayerNorm bf16 8192 x 1024 at the same
# time one kernel at a time under Nsight Compute (12.6/11.9 against 12.5/12.9 us), while the graph
# anchor gives compile 11.69 against our 13.05: the anchor dropped each call's outputs at once, so
# every call in its graph wrote the same block. The LayerNorm and activation anchors with the
# outputs rotating (this tree) and as before (old_nn_ops_torch_tmp.py, a copy of HEAD's), then
# our bench of the same cases, in one call.
call11() {
  for v in new old; do
    local script=benches/anchors/nn_ops_torch.py
    [ $v = old ] && script=benches/anchors/old_nn_ops_torch_tmp.py
    for op in layer_norm gelu swish mse_loss; do
      step torch_${op}_$v 300 python3 $script --only $op
    done
  done
  step ours 300 $B/nn_ops_gpu_check --bench-only
  python3 - "$OUT" <<'PY'
import json, sys, glob, os
d = sys.argv[1]
for f in sorted(glob.glob(os.path.join(d, "torch_*.log"))):
    tag = os.path.basename(f)[6:-4]
    for l in open(f):
        if not l.startswith('{'): continue
        r = json.loads(l)
        if r.get('impl') != 'torch_compile': continue
        p = r['params']
        print('%-18s %-5s %s %9.2f %s' % (tag, r['precision'], ','.join(f'{k}={v}' for k, v in sorted(p.items())), r.get('us_per_call') or -1, r.get('cache')))
PY
  grep -E "^(layer_norm|gelu|swish|mse)" "$OUT/ours.log" | grep -v schedule= | grep "seq=8192" | cut -c1-110
  cat "$OUT/table.txt"
}
# Call 12 (issues 14's method in tile_ssm's anchor): tile_ssm_torch.py with each call's outputs
# rotating with its inputs (this tree) and as before (old_tile_ssm_torch_tmp.py, HEAD's copy), the
# large profile, then our bench of the same profile, one call.
call12() {
  for v in new old; do
    local script=benches/anchors/tile_ssm_torch.py
    [ $v = old ] && script=benches/anchors/old_tile_ssm_torch_tmp.py
    step ssm_$v 280 env TILE_SSM_PROFILES=large python3 $script
  done
  step ours 200 $B/tile_ssm_gpu_check --bench-only --profile large
  for v in new old; do
    python3 - "$OUT/ssm_$v.log" $v <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    p = r.get('params', {})
    print('%-4s %-17s %-14s %9s %s' % (sys.argv[2], r.get('impl'), p.get('direction'), r.get('us_per_call'), r.get('cache')))
PY
  done
  grep -E "large|dram" "$OUT/ours.log" | head -12
  cat "$OUT/table.txt"
}
# Call 13: the four plugins' GPU unit tests (release test binaries built on the dev machine, in
# .device/bin/tests), which now open the device through StandaloneGpu: each must run its GPU cases,
# not print "skipped".
call13() {
  for t in nn_ops poisson tile_ops tile_ssm; do
    step test_$t 300 $B/tests/apex_plugin_$t --test-threads 1 --nocapture cuda_cases_verify
    grep -E "skipped|test result|passed|FAILED|panicked" "$OUT/test_$t.log" | head -5
  done
  cat "$OUT/table.txt"
}
# Call 14: the final tree (673bfd8, after Element, the harness and the chunk loops moved into
# plugin-api): the four plugins' GPU self-checks.
call14() {
  for p in poisson nn_ops tile_ops tile_ssm; do
    step $p 300 $B/${p}_gpu_check
    grep -E "^(checks|RESULT)|FAIL" "$OUT/$p.log" | head -5
  done
  cat "$OUT/table.txt"
}
# Call 15 (the review commit b05b173): the Poisson self-check and bench at 256^3 (CG's rho slot
# now chosen once per solve), and two GPU unit tests through StandaloneGpu::sync.
call15() {
  step poisson 300 $B/poisson_gpu_check --bench
  grep -E "^(checks|RESULT)|FAIL" "$OUT/poisson.log" | head -5
  grep -E "^bench (cg|mgpcg) (64|256)" "$OUT/poisson.log" | grep -v "zch\|/SM\|launches\]" | cut -c7-120
  for t in poisson tile_ops; do
    step test_$t 300 $B/tests/apex_plugin_$t --test-threads 1 cuda_cases_verify
    grep -E "skipped|test result" "$OUT/test_$t.log" | head -3
  done
  cat "$OUT/table.txt"
}
