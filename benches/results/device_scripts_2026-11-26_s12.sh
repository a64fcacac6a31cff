#!/usr/bin/env bash
# The device calls of the twelfth session (2026-11-26), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugins
# in .device/host/release, the A/B plugin builds in .device/ab). Usage on the device:
# `source benches/results/device_scripts_2026-11-26_s12.sh; call2`.
# Call 1 was benches/probes/pdl_chain.cu alone (nvcc -O3 -arch=sm_90; log
# pdl_chain_h100_2026-11-26_s12_call1.log).
set -u
B=.device/bin
HOST="env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
row() { printf '%-22s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
host_ab() {  # $1: label, $2: plugin build; the fp16 fast profile and B=8 of apex-host's suite
  cp .device/ab/$2.so .device/host/release/libapex_plugin_ff_model.so
  step host_$1 150 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ab_$1
  python3 - /tmp/ab_$1/summary.json $1 <<'PY' | tee -a "$OUT/ab.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    if 'fp16' in k and 'path=fast' in k and 'height=128' in k and 'tile_size_l0=16' in k:
        us = '%.2f us' % (c['p50_ms'] * 1e3) if 'p50_ms' in c else '-'
        print(sys.argv[2], 'batch=8' if 'batch=8' in k else 'batch=1', us, c['status'])
PY
}

# Call 2 (issue 13): the lean refine at four CTAs a SM (64 registers; its stash inside the dead
# modulated rows, 49.5 KiB) and ff_base after ff_select, skipping what the refines write. The
# self-check of every fast shape (auto, and lean where it applies), the in-process bench against
# the previous build twice, apex-host's suite with each plugin build twice, Nsight Compute's
# kernel durations at B=8.
call2() {
  local X=$B/ff_model_gpu_check
  step ff_check 240 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto,lean
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head -70 | tail -12
  for r in 1 2; do
    step bench_prev_$r 60 $B/ff_model_gpu_check_prev --bench-only --refine auto
    step bench_new_$r 60 $X --bench-only --refine auto
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8|scaling)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  host_ab prev_1 prev; host_ab new_1 new
  step ncu_B8 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    $X --bench-only --only B=8 --refine auto
  grep -E "^  ff_|gpu__time_duration" "$OUT/ncu_B8.log" | sed 's/(int, [^)]*)//' | paste - - | awk '{print $1, $(NF)}'
  host_ab prev_2 prev; host_ab new_2 new
  cat "$OUT/table.txt"
}

# Call 3 (issue 13): call 2 again after its two faults were mended: the lean operand's bs was
# still placed from the region's start, not after the moved modulated rows (every lean level
# whose stash outgrows the rows, t = 8 and t = 6, failed); ff_base now reads ff_select's coverage
# map instead of rebuilding it per block from the ids (three barriers a block). Adds Nsight
# Compute's durations at the profile.
call3() {
  call2
  step ncu_B1 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum $B/ff_model_gpu_check --bench-only --only profile --refine auto
  grep -E "^  ff_|gpu__time_duration" "$OUT/ncu_B1.log" | sed 's/(int, [^)]*)//' | paste - - | awk '{print $1, $(NF)}'
}

# Per CUDA line of one Nsight Compute report's source page (cuda,sass): the column whose header
# contains $2, summed over each line's SASS rows; the top 40.
by_line() {
  python3 - "$1" "$2" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
want = sys.argv[2]
hdr = next((i for i, r in enumerate(rows) if any(want in c for c in r)), None)
if hdr is None:
    print('no column', want); print(rows[:3]); sys.exit()
h = rows[hdr]; col = next(j for j, c in enumerate(h) if want in c)
def num(x):
    try: return float(x.replace(',', ''))
    except Exception: return 0.0
per_line = collections.Counter(); text = {}
for r in rows[hdr + 1:]:
    if len(r) <= col: continue
    if r[0].strip().isdigit():
        ln = int(r[0]); text[ln] = r[1].strip()[:100]; per_line[ln] += num(r[col])
tot = sum(per_line.values()) or 1
print(h[col], 'total', tot)
for ln, v in per_line.most_common(40): print('%6.1f%% %5d %s' % (100 * v / tot, ln, text.get(ln, '')))
PY
}

# Call 4 (issue 13): ff_base loading its dense vectors before the coverage byte (against call 3's
# build, in process, twice; Nsight Compute's B=8 durations), then where the lean L0 refine's
# instructions go at B=8: executed instructions and stall samples by CUDA line, the pipes'
# utilisation and shared-memory bank conflicts.
call4() {
  local X=$B/ff_model_gpu_check
  step ff_check 150 $X --only 'profile,B=8,256x256,C=16 36x60 tiles 6/3,K=64/160' --refine auto
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | tail -4
  for r in 1 2; do
    step bench_b07_$r 60 $B/ff_model_gpu_check_b07 --bench-only --refine auto
    step bench_new_$r 60 $X --bench-only --refine auto
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  for v in b07 new; do
    local Y=$X; [ $v = b07 ] && Y=$B/ff_model_gpu_check_b07
    step ncu_base_$v 60 ncu --clock-control none --cache-control none --kernel-name ff_base --launch-skip 2 --launch-count 3 \
      --metrics gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed $Y --bench-only --only B=8 --refine auto
    grep -E "gpu__time_duration|dram__bytes|dram__throughput" "$OUT/ncu_base_$v.log" | sed "s/^/$v /"
  done
  cat "$OUT"/ncu_base_*.log > "$OUT/ncu_base.txt"; rm -f "$OUT"/ncu_base_*.log
  (echo '#define DTYPE 1'; cat plugins/ff_model/src/cuda/ff_fast.cu; echo; cat plugins/ff_model/src/cuda/ff_eager.cu) > ff_fast.cu
  APEX_NVRTC_LINEINFO=1 APEX_KERNEL_CACHE=off ncu --clock-control none --cache-control none --import-source yes \
    --kernel-name ff_refine_apply_lean --launch-skip 4 --launch-count 1 --set full \
    -o /tmp/rep4 $X --bench-only --only B=8 --refine auto > /dev/null 2>&1
  ncu -i /tmp/rep4.ncu-rep --page source --csv --print-source cuda,sass > /tmp/src4s.csv 2>&1
  { by_line /tmp/src4s.csv 'Instructions Executed'; by_line /tmp/src4s.csv 'Warp Stall Sampling (All'; } > "$OUT/lean_lines.txt"
  ncu -i /tmp/rep4.ncu-rep --page details > "$OUT/lean_details.txt" 2>&1
  head -30 "$OUT/lean_lines.txt"
  grep -iE "Duration|Executed Ipc|Issue Slots|Bank|Pipe|Shared|Instructions|Occupancy" "$OUT/lean_details.txt" | head -40
  rm -f ff_fast.cu
  cat "$OUT/table.txt"
}

# Call 5 (issue 13): the cluster barriers took 41 % of the lean L0 refine's stall samples at B=8
# in call 4 (arrive 17 %). Two levers, timed in process against call 3's build (b07), twice:
# the cluster scheduling policy (an experiment build, `_pol`, reading APEX_FF_CLUSTER_POLICY =
# spread | balance), and relaxed arrives with one cluster-scope fence in thread 0 (`_rel`, which
# also reads the policy variable). The self-check of `_rel` first.
call5() {
  step ff_check 200 $B/ff_model_gpu_check_rel --only 'profile,B=8,C=16 36x60 tiles 6/3,K=64/160,tiles 32/16' --refine auto,fused,lean
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | tail -4
  for r in 1 2; do
    step bench_b07_$r 60 $B/ff_model_gpu_check_b07 --bench-only --refine auto
    step bench_spread_$r 60 env APEX_FF_CLUSTER_POLICY=spread $B/ff_model_gpu_check_pol --bench-only --refine auto
    step bench_balance_$r 60 env APEX_FF_CLUSTER_POLICY=balance $B/ff_model_gpu_check_pol --bench-only --refine auto
    step bench_rel_$r 60 $B/ff_model_gpu_check_rel --bench-only --refine auto
    step bench_relbal_$r 60 env APEX_FF_CLUSTER_POLICY=balance $B/ff_model_gpu_check_rel --bench-only --refine auto
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  cat "$OUT/table.txt"
}

# Call 6 (issue 13): fewer instructions in the refine: the depthwise 3x3 as a window sliding
# along whole tile rows (t = 16 and 8; depthwise_rows) and the GEMM's operand fragments by
# ldmatrix.x4 (one instruction for four 32-bit loads). The self-check of every fast shape
# under auto and of four shapes under fused, lean and split; the in-process bench against the
# committed build (c08 = 081cd96), twice; Nsight Compute's B=8 durations.
call6() {
  local X=$B/ff_model_gpu_check
  step ff_check 240 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check_paths 200 $X --only 'profile,B=8,C=16 36x60 tiles 6/3,tiles 32/16' --refine fused,lean,split
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" | grep -cE "^ok"
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" | awk '/^(RESULT)/{print; f=0; next} /^FAIL/{f=1} f' | head -20
  for r in 1 2; do
    step bench_c08_$r 60 $B/ff_model_gpu_check_c08 --bench-only --refine auto
    step bench_new_$r 60 $X --bench-only --refine auto
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  step ncu_B8 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum $X --bench-only --only B=8 --refine auto
  grep -E "^  ff_|gpu__time_duration" "$OUT/ncu_B8.log" | sed 's/(int, [^)]*)//' | paste - - | awk '{print $1, $(NF)}'
  cat "$OUT/table.txt"
}

# Call 7 (issue 13): FiLM's linears with 1, 2 or 4 frames a block (an experiment build, `_fpb`,
# reading APEX_FF_FILM_FPB; 4 is the committed choice) against f8151e5's behaviour in process,
# twice; then the session's figures: the PyTorch anchor on the plugin's export and apex-host's
# ff_model suite with the anchor's rows (FPB 4, then with the best FPB for B=8), and racecheck of
# the fused and lean kernels at the profile in every precision.
call7() {
  local X=$B/ff_model_gpu_check_fpb
  for r in 1 2; do
    for f in 4 2 1; do step bench_fpb${f}_$r 60 env APEX_FF_FILM_FPB=$f $X --bench-only --refine auto; done
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  step ff_export 120 $B/ff_model_export --out /tmp/ff_export
  mkdir -p /tmp/anchor; step ff_torch 300 env OUT=/tmp/anchor python3 benches/anchors/ff_model_torch.py /tmp/ff_export
  step ff_run 200 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ff \
    --anchor-results /tmp/anchor/ff_model_torch.jsonl --format apex-x-gpu
  tail -3 "$OUT/ff_run.log"
  grep -iE "torch|frames" /tmp/ff/summary.md | head -16
  cp /tmp/ff/summary.json "$OUT/ff_summary.json"; cp /tmp/ff/summary.md "$OUT/ff_summary.md"
  for f in 2 1; do
    step ff_run_fpb$f 120 env APEX_FF_FILM_FPB=$f $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ff$f
    python3 - /tmp/ff$f/summary.json fpb$f <<'PY' | tee -a "$OUT/fpb_host.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    if 'fp16' in k and 'path=fast' in k and 'height=128' in k and 'tile_size_l0=16' in k:
        us = '%.2f us' % (c['p50_ms'] * 1e3) if 'p50_ms' in c else '-'
        print(sys.argv[2], 'batch=8' if 'batch=8' in k else 'batch=1', us, c['status'])
PY
  done
  cat "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log" "$OUT"/ff_run_fpb*.log /tmp/anchor/ff_model_torch.jsonl > "$OUT/anchor_run.txt" 2>/dev/null
  rm -f "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log" "$OUT"/ff_run_fpb*.log
  step race_fused 170 compute-sanitizer --tool racecheck --print-limit 10 $B/ff_model_gpu_check --only profile --refine fused
  step race_lean 200 compute-sanitizer --tool racecheck --print-limit 10 $B/ff_model_gpu_check --only profile --refine lean
  grep -hE "RACECHECK SUMMARY|RESULT|hazard|^ok|^FAIL" "$OUT"/race_*.log | head -14
  cat "$OUT"/race_*.log > "$OUT/racecheck.txt"; rm -f "$OUT"/race_*.log
  cat "$OUT/table.txt"
}

# Call 8 (issue 14): the whole nn_ops CUDA suite through apex-host on this session's H100 (both
# grids: the seed's and the LLM rows and vocabularies), its wall time and the share spent
# sampling (issue 14: under 10 minutes), and per op the large-grid figures against the copy line.
call8() {
  step nn_full 575 $HOST run --no-build --backends cuda --filter 'nn_ops.*' --output-dir /tmp/nn_full
  tail -4 "$OUT/nn_full.log"
  python3 - /tmp/nn_full/summary.json <<'PY' | tee "$OUT/nn_full_extract.txt"
import json, sys
s = json.load(open(sys.argv[1]))
print('counts', s['counts'])
print('time_accounting', json.dumps(s['time_accounting']))
rows = []
for k, c in s['benchmarks'].items():
    t = c.get('throughput') or {}
    if 'p50_ms' not in c: rows.append((k, '-', '-', '-', c['status'])); continue
    rows.append((k, '%.2f' % (c['p50_ms'] * 1e3), '%.0f' % t.get('gbps', 0), '%.1f' % t.get('pct_of_copy_bandwidth', 0), c['status']))
print('line_gbps', next((c['throughput'].get('line_gbps') for c in s['benchmarks'].values() if c.get('throughput')), None))
for r in sorted(rows):
    if 'rows=' in r[0] and 'vocab=' in r[0] and 'rows=4096' not in r[0]: continue
    if 'seq=8192' in r[0] or 'rows=4096' in r[0] or 'batch=16,' in r[0] and 'seq=256' in r[0] and 'dim=512' in r[0]:
        print(' '.join(r))
PY
  cp /tmp/nn_full/summary.md "$OUT/nn_full_summary.md"
  gzip -c /tmp/nn_full/summary.json > "$OUT/nn_full_summary.json.gz"
  cat "$OUT/table.txt"
}

# Call 9: plugin-api's LaunchEx (cuLaunchKernelEx with cluster and programmatic-dependent
# attributes; ff_model's cluster launch moved onto it) and nn_ops launching every kernel
# programmatic-dependent (griddepcontrol.wait / launch_dependents first in every kernel).
# plugin-api's GPU unit test; ff_model's self-check and bench against f8151e5's build (f81);
# the nn_ops self-check (dependent launches); nn_ops' bench with --launch plain and dependent
# alternating on the seed's 2 M-element shapes and the 1,024-wide rows; apex-host's seed-small
# cases DRAM-cold and L2-hot with the previous and the new plugin.
call9() {
  step api_test 60 $B/plugin_api_tests launch
  tail -3 "$OUT/api_test.log"
  step ff_check 120 $B/ff_model_gpu_check --only 'profile,B=8,C=16 36x60 tiles 6/3' --refine auto
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | tail -3
  step ff_bench_f81 40 $B/ff_model_gpu_check_f81 --bench-only --refine auto
  step ff_bench_new 40 $B/ff_model_gpu_check --bench-only --refine auto
  for f in "$OUT"/ff_bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8)" "$f"; done
  cat "$OUT/ff_check.log" "$OUT"/ff_bench_*.log > "$OUT/ff.txt"; rm -f "$OUT/ff_check.log" "$OUT"/ff_bench_*.log
  step nn_check 270 $B/nn_ops_gpu_check
  grep -cE "^PASS" "$OUT/nn_check.log"; grep -E "^FAIL|RESULT|error" "$OUT/nn_check.log" | head -8; tail -2 "$OUT/nn_check.log"
  for r in 1 2; do
    for m in plain dependent; do
      step nn_bench_${m}_$r 80 $B/nn_ops_gpu_check --bench-only --launch $m --only "batch=16"
      step nn_bench1024_${m}_$r 80 $B/nn_ops_gpu_check --bench-only --launch $m --only "dim=1024"
    done
  done
  for f in "$OUT"/nn_bench*.log; do echo "-- $(basename $f)"; grep -E "^(layer_norm|gelu|swish|mse_loss|cross_entropy)" "$f" | awk '{print $1, $2, $3, $5}'; done > "$OUT/nn_bench.txt"
  cat "$OUT/nn_bench.txt" | head -60
  rm -f "$OUT"/nn_bench_*.log "$OUT"/nn_bench1024_*.log
  for v in nn_prev nn_new; do
    cp .device/ab/$v.so .device/host/release/libapex_plugin_nn_ops.so
    step host_$v 90 $HOST run --no-build --backends cuda --l2-hot --filter 'nn_ops.*/cuda/*/*batch=16,dim=512,*seq=256' --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=512' --output-dir /tmp/$v
    python3 - /tmp/$v/summary.json $v <<'PY' | tee -a "$OUT/host_ab.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    t = c.get('timing') or {}
    cold = t.get('batch', {}).get('stats', {}).get('p50_ms', 0) * 1e3
    hot = t.get('batch_hot', {}).get('stats', {}).get('p50_ms', 0) * 1e3
    print(sys.argv[2], k.split('/')[0], k.split('/')[2], 'cold %.2f us' % cold, 'hot %.2f us' % hot, c['status'])
PY
  done
  cat "$OUT/table.txt"
}

# Call 10 (issue 14): the large grid against torch.compile in one call with the dependent-launch
# plugin: the torch anchor (LLM rows and vocabularies, DRAM-cold, outputs rotating), then
# apex-host on the same cases with the anchor's rows; then the LLM rows with the previous plugin
# (plain launches) for the A/B.
call10() {
  mkdir -p /tmp/anchor
  step nn_torch 300 env OUT=/tmp/anchor python3 benches/anchors/nn_ops_torch.py
  tail -2 "$OUT/nn_torch.log"
  cp .device/ab/nn_new.so .device/host/release/libapex_plugin_nn_ops.so
  step host_new 200 $HOST run --no-build --backends cuda --filter 'nn_ops.*/cuda/*/*seq=8192' \
    --filter 'nn_ops.cross_entropy/cuda/*/*rows=4096,vocab=*' --anchor-results /tmp/anchor/nn_ops_torch.jsonl --output-dir /tmp/nn_new
  tail -2 "$OUT/host_new.log"
  cp /tmp/nn_new/summary.md "$OUT/nn_new_summary.md"
  cp /tmp/anchor/nn_ops_torch.jsonl "$OUT/nn_ops_torch.jsonl"
  cp .device/ab/nn_prev.so .device/host/release/libapex_plugin_nn_ops.so
  step host_prev 150 $HOST run --no-build --backends cuda --filter 'nn_ops.*/cuda/*/*seq=8192' --output-dir /tmp/nn_prev
  python3 - /tmp/nn_prev/summary.json /tmp/nn_new/summary.json <<'PY' | tee "$OUT/ab_llm.txt"
import json, sys
a = json.load(open(sys.argv[1]))['benchmarks']; b = json.load(open(sys.argv[2]))['benchmarks']
for k in sorted(a):
    if k in b and 'p50_ms' in a[k] and 'p50_ms' in b[k]:
        pa, pb = a[k]['p50_ms'] * 1e3, b[k]['p50_ms'] * 1e3
        print('%-80s plain %9.2f  dependent %9.2f  %+6.2f%%  line %5.1f%%' % (k, pa, pb, 100 * (pb / pa - 1), b[k]['throughput']['pct_of_copy_bandwidth']))
PY
  cat "$OUT/table.txt"
}

# Call 11 (issue 14): GELU-erf bf16/fp16 8192 x 512 ran 13-17 % slower with dependent launch in
# call 10. nn_new2: GELU-erf waits but leaves the trigger implicit (its blocks exit); against the
# plain plugin (nn_prev) and call 10's (nn_new), alternating twice, on the GELU and Swish LLM rows;
# the GELU self-check of the new build first.
call11() {
  step nn_check_gelu 100 $B/nn_ops_gpu_check --only gelu
  grep -E "^checks|RESULT" "$OUT/nn_check_gelu.log"
  for r in 1 2; do
    for v in nn_prev nn_new nn_new2; do
      cp .device/ab/$v.so .device/host/release/libapex_plugin_nn_ops.so
      step host_${v}_$r 90 $HOST run --no-build --backends cuda --filter 'nn_ops.gelu/cuda/*/*seq=8192' \
        --filter 'nn_ops.swish/cuda/*/*dim=512,seq=8192' --output-dir /tmp/${v}_$r
    done
  done
  python3 - /tmp <<'PY' | tee "$OUT/ab_gelu.txt"
import json, sys
runs = {}
for v in ('nn_prev', 'nn_new', 'nn_new2'):
    for r in (1, 2):
        b = json.load(open('%s/%s_%d/summary.json' % (sys.argv[1], v, r)))['benchmarks']
        for k, c in b.items():
            runs.setdefault(k, {}).setdefault(v, []).append(c.get('p50_ms', 0) * 1e3)
print('%-72s %17s %17s %17s' % ('case', 'plain', 'dependent', 'erf waits only'))
for k in sorted(runs):
    print('%-72s %s' % (k, ' '.join('%8.2f %8.2f' % tuple(runs[k].get(v, [0, 0])) for v in ('nn_prev', 'nn_new', 'nn_new2'))))
PY
  cat "$OUT/table.txt"
}
