#!/usr/bin/env bash
# The device calls of the eleventh session (2026-11-26), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugins
# in .device/host/release). Usage on the device:
# `source benches/results/device_scripts_2026-11-26_s11.sh; call1`.
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
bench_lines() { grep -E "^(cross_entropy|layer_norm|gelu|swish|mse_loss|copy)" "$1" | sed 's/  */ /g'; }

# The stall samples of an Nsight Compute report by CUDA line (top 30), from its source page.
top_lines() {
  python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
hdr = None
for i, r in enumerate(rows):
    if any('Sampling' in c for c in r):
        hdr = i; break
if hdr is None:
    print('no sampling column; first rows:'); [print(r[:6]) for r in rows[:8]]; sys.exit()
h = rows[hdr]
cols = [j for j, c in enumerate(h) if 'Sampling' in c]
src = next((j for j, c in enumerate(h) if c.strip().lower() == 'source'), 1)
ln = next((j for j, c in enumerate(h) if c.strip() in ('#', 'Line', '# Line', 'Line No', 'Address')), 0)
print('columns:', [h[j] for j in cols])
def num(x):
    try: return float(x.replace(',', ''))
    except Exception: return 0.0
body = [r for r in rows[hdr + 1:] if len(r) > max(cols)]
tot = sum(num(r[cols[0]]) for r in body) or 1
for r in sorted(body, key=lambda r: -num(r[cols[0]]))[:30]:
    print('%6.1f%% %s | %s' % (100 * num(r[cols[0]]) / tot, r[ln], r[src].strip()[:110]))
PY
}

# Call 1 (issue 13): ff_model on an H100. The self-check of the fused and lean refine paths
# (and ff_select's race fix), the fp16 bench of split, fused and lean, racecheck on the lean path,
# then Nsight Compute at B=8 fp16: per-kernel durations of a lean frame, and the source-level stall
# samples of the L0 refine kernel, fused and lean (APEX_NVRTC_LINEINFO=1).
call1() {
  local X=$B/ff_model_gpu_check
  step ff_check 200 $X --only 'profile,B=8,tiles 32/16' --refine fused,lean
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head -30
  step ff_bench 150 $X --bench-only --refine split,fused,lean
  tail -14 "$OUT/ff_bench.log"
  step ff_race 150 compute-sanitizer --tool racecheck --print-limit 10 $X --only profile --refine lean
  grep -E "ERROR SUMMARY|RESULT|^ok|^FAIL|hazard|Race" "$OUT/ff_race.log" | head -12
  step ncu_kernels 120 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 10 --launch-count 10 \
      --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      $X --bench-only --only B=8 --refine lean
  grep -E "^  ff_|gpu__time_duration|registers_per|warps_active|dram__throughput" "$OUT/ncu_kernels.log" | sed 's/(int, [^)]*)//' \
      | awk '/^  ff_/{n=$1; next} {printf "%s %s %s\n", n, $1, $NF}' | paste - - - - | awk '{print $1, "dram%", $3, "us", $6/1000, "regs", $9, "warps%", $12}'
  mkdir -p /tmp/src
  (echo '#define DTYPE 1'; cat plugins/ff_model/src/cuda/ff_fast.cu; echo; cat plugins/ff_model/src/cuda/ff_eager.cu) > /tmp/src/ff_fast.cu
  for v in fused lean; do
    local k=ff_refine_apply; [ $v = lean ] && k=ff_refine_apply_lean
    step ncu_$v 150 env APEX_NVRTC_LINEINFO=1 APEX_KERNEL_CACHE=off ncu --clock-control none --cache-control none --import-source yes \
      --kernel-name $k --launch-skip 4 --launch-count 1 --section WarpStateStats --section SourceCounters --section Occupancy \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats -o /tmp/rep_$v $X --bench-only --only B=8 --refine $v
    ncu -i /tmp/rep_$v.ncu-rep --page details > "$OUT/ncu_${v}_details.txt" 2>&1
    ncu -i /tmp/rep_$v.ncu-rep --page source --csv --print-source cuda --import-source yes --source-folders /tmp/src > /tmp/src_$v.csv 2>&1
    echo "== $v: stall samples by line"; top_lines /tmp/src_$v.csv | tee "$OUT/ncu_${v}_lines.txt"
    grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Stall|Warp Cycles Per Issued|Block Limit" "$OUT/ncu_${v}_details.txt" | head -30
  done
  rm -f "$OUT"/ncu_fused.log "$OUT"/ncu_lean.log
  cat "$OUT/table.txt"
}

# Call 2 (issue 14): nn_ops on an H100: LayerNorm's tma schedule (self-check of every LayerNorm
# case under each schedule, then the bench of every schedule), and cross-entropy forward + gradient
# with the shared-memory default against the other plans (bf16).
call2() {
  local X=$B/nn_ops_gpu_check
  step ln_check 250 $X --only layer_norm
  grep -E "^checks|FAIL|RESULT" "$OUT/ln_check.log" | head -12
  step ln_bench 150 $X --bench-only --only layer_norm
  step ce_bench 200 $X --bench-only --only "cross_entropy+grad bf16"
  for f in ln_bench ce_bench; do echo "-- $f"; bench_lines "$OUT/$f.log"; done
  cat "$OUT/table.txt"
}

# Call 3 (issue 13): call 1's source-level stall samples again (its `ncu -i` lacked
# --import-source, so the source page printed nothing), for the fused and lean L0 refine.
call3() {
  local X=$B/ff_model_gpu_check
  mkdir -p /tmp/src
  (echo '#define DTYPE 1'; cat plugins/ff_model/src/cuda/ff_fast.cu; echo; cat plugins/ff_model/src/cuda/ff_eager.cu) > /tmp/src/ff_fast.cu
  for v in fused lean; do
    local k=ff_refine_apply; [ $v = lean ] && k=ff_refine_apply_lean
    APEX_NVRTC_LINEINFO=1 APEX_KERNEL_CACHE=off ncu --clock-control none --cache-control none --import-source yes \
      --kernel-name $k --launch-skip 4 --launch-count 1 --section WarpStateStats --section SourceCounters \
      -o /tmp/rep3_$v $X --bench-only --only B=8 --refine $v > /dev/null 2>&1
    ncu -i /tmp/rep3_$v.ncu-rep --page source --csv --print-source cuda --import-source yes --source-folders /tmp/src > /tmp/src3_$v.csv 2>&1 \
      || ncu -i /tmp/rep3_$v.ncu-rep --page source --csv --print-source cuda > /tmp/src3_$v.csv 2>&1
    head -c 600 /tmp/src3_$v.csv; echo
    echo "== $v: stall samples by line"; top_lines /tmp/src3_$v.csv | tee "$OUT/ncu3_${v}_lines.txt"
    ncu -i /tmp/rep3_$v.ncu-rep --page source --csv --print-source sass > /tmp/sass3_$v.csv 2>&1
    echo "== $v: by SASS"; top_lines /tmp/sass3_$v.csv > "$OUT/ncu3_${v}_sass.txt"; head -20 "$OUT/ncu3_${v}_sass.txt"
  done
}

# Ncu's per-kernel lines of a run: name, DRAM %, µs, registers, warps active %.
kernel_lines() {
  grep -E "^  ff_|gpu__time_duration|registers_per|warps_active|dram__throughput" "$1" | sed 's/(int, [^)]*)//' \
    | awk '/^  ff_/{n=$1; next} {printf "%s %s %s\n", n, $1, $NF}' | paste - - - - | awk '{print $1, "dram%", $3, "us", $6/1000, "regs", $9, "warps%", $12}'
}
# Call 4 (issue 13): FiLM in three launches (ff_film_scan a warp per channel; ff_film_fc1 with
# LayerNorm and ff_film_out applying each weight slice to 8 frames) and Refine::Auto (fused or
# lean per level by cluster waves), against the previous build (_old: FiLM in two launches, fused
# default) in the same call: the self-check on every fast shape under auto, the fp16 bench of both
# binaries, Nsight Compute's per-kernel durations at B=8 and B=1, and the lean kernel's stall
# samples by source line (the NVRTC file name resolves against the working directory).
call4() {
  local X=$B/ff_model_gpu_check
  step ff_check 240 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head -40
  step bench_old 100 $B/ff_model_gpu_check_old --bench-only --refine fused,lean
  step bench_new 100 $X --bench-only --refine auto,fused,lean
  for f in bench_old bench_new; do echo "-- $f"; grep -E "^(profile|B=8|scaling)" "$OUT/$f.log"; done
  for s in B=8 profile; do
    step ncu_${s//=/} 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
      --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      $X --bench-only --only $s --refine auto
    echo "== ncu $s"; kernel_lines "$OUT/ncu_${s//=/}.log"
  done
  (echo '#define DTYPE 1'; cat plugins/ff_model/src/cuda/ff_fast.cu; echo; cat plugins/ff_model/src/cuda/ff_eager.cu) > ff_fast.cu
  APEX_NVRTC_LINEINFO=1 APEX_KERNEL_CACHE=off ncu --clock-control none --cache-control none --import-source yes \
    --kernel-name ff_refine_apply_lean --launch-skip 4 --launch-count 1 --section WarpStateStats --section SourceCounters \
    -o /tmp/rep4 $X --bench-only --only B=8 --refine lean > /dev/null 2>&1
  ncu -i /tmp/rep4.ncu-rep --page source --csv --print-source cuda > /tmp/src4.csv 2>&1
  echo "== lean B=8 L0: stall samples by line"; top_lines /tmp/src4.csv | tee "$OUT/ncu4_lean_lines.txt"
  rm -f ff_fast.cu
  cat "$OUT"/ncu_B8.log "$OUT"/ncu_profile.log > "$OUT/ncu_kernels.txt"; rm -f "$OUT"/ncu_B8.log "$OUT"/ncu_profile.log
  cat "$OUT/table.txt"
}

# Call 5 (issue 13): call 4's build plus ff_pack's 4-pixel loads, FiLM's weight loads issued
# before the vectors are staged and the one-chunk scan in registers, and a check shape with more
# than 32 tiles a level (the chunked scan): the self-check of every fast shape under auto, the
# fp16 bench against the previous build (_old) in the same call, Nsight Compute's per-kernel
# durations at B=8 and B=1, and the lean L0 kernel's stall samples by SASS instruction with its
# CUDA line (source page, cuda,sass).
call5() {
  local X=$B/ff_model_gpu_check
  step ff_check 240 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head -40
  step bench_old 100 $B/ff_model_gpu_check_old --bench-only --refine fused,lean
  step bench_new 100 $X --bench-only --refine auto,fused,lean
  for f in bench_old bench_new; do echo "-- $f"; grep -E "^(profile|B=8|scaling)" "$OUT/$f.log"; done
  for s in B=8 profile; do
    step ncu_${s//=/} 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
      --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      $X --bench-only --only $s --refine auto
    echo "== ncu $s"; kernel_lines "$OUT/ncu_${s//=/}.log"
  done
  (echo '#define DTYPE 1'; cat plugins/ff_model/src/cuda/ff_fast.cu; echo; cat plugins/ff_model/src/cuda/ff_eager.cu) > ff_fast.cu
  APEX_NVRTC_LINEINFO=1 APEX_KERNEL_CACHE=off ncu --clock-control none --cache-control none --import-source yes \
    --kernel-name ff_refine_apply_lean --launch-skip 4 --launch-count 1 --section WarpStateStats --section SourceCounters \
    -o /tmp/rep5 $X --bench-only --only B=8 --refine lean > /dev/null 2>&1
  ncu -i /tmp/rep5.ncu-rep --page source --csv --print-source cuda,sass > /tmp/src5.csv 2>&1
  head -c 1500 /tmp/src5.csv; echo
  python3 - /tmp/src5.csv > "$OUT/ncu5_lean_by_line.txt" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
hdr = next(i for i, r in enumerate(rows) if any('Sampling (All' in c for c in r))
h = rows[hdr]; col = next(j for j, c in enumerate(h) if 'Sampling (All' in c)
print('header:', h[:8])
def num(x):
    try: return float(x.replace(',', ''))
    except Exception: return 0.0
per_line = collections.Counter(); text = {}; cur = None; sass_top = []
for r in rows[hdr + 1:]:
    if not r: continue
    # a CUDA line row names the file's line; SASS rows carry an address
    if len(r) > 1 and r[0].strip().isdigit() and not r[0].startswith('0x'):
        cur = int(r[0]); text[cur] = r[1].strip()[:100]
    v = num(r[col]) if len(r) > col else 0.0
    if cur is not None: per_line[cur] += v
    sass_top.append((v, cur, ' | '.join(x.strip() for x in r[:3])[:120]))
tot = sum(per_line.values()) or 1
print('== by CUDA line (%% of samples)')
for ln, v in per_line.most_common(40): print('%6.1f%% %5d %s' % (100 * v / tot, ln, text.get(ln, '')))
print('== top SASS rows')
for v, ln, t in sorted(sass_top, reverse=True)[:40]: print('%6.1f%% line %s %s' % (100 * v / tot, ln, t))
PY
  head -60 "$OUT/ncu5_lean_by_line.txt"
  rm -f ff_fast.cu
  cat "$OUT"/ncu_B8.log "$OUT"/ncu_profile.log > "$OUT/ncu_kernels.txt"; rm -f "$OUT"/ncu_B8.log "$OUT"/ncu_profile.log
  cat "$OUT/table.txt"
}

# Call 6 (issue 13): call 5's build with every channel's rows staged in one round of loads (CB 128):
# the self-check of every fast shape under auto plus fused and lean explicitly at the profile and
# B=8, the fp16 bench against the previous build (_old) in the same call, per-kernel durations at
# B=8 and B=1, and the lean L0 kernel's stall samples by CUDA line.
call6() {
  local X=$B/ff_model_gpu_check
  step ff_check 200 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check2 150 $X --only 'profile,B=8' --refine fused,lean
  cat "$OUT/ff_check.log" "$OUT/ff_check2.log" | awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' | head -50
  step bench_old 100 $B/ff_model_gpu_check_old --bench-only --refine fused,lean
  step bench_new 100 $X --bench-only --refine auto,fused,lean
  for f in bench_old bench_new; do echo "-- $f"; grep -E "^(profile|B=8|scaling)" "$OUT/$f.log"; done
  for s in B=8 profile; do
    step ncu_${s//=/} 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
      --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      $X --bench-only --only $s --refine auto
    echo "== ncu $s"; kernel_lines "$OUT/ncu_${s//=/}.log"
  done
  (echo '#define DTYPE 1'; cat plugins/ff_model/src/cuda/ff_fast.cu; echo; cat plugins/ff_model/src/cuda/ff_eager.cu) > ff_fast.cu
  APEX_NVRTC_LINEINFO=1 APEX_KERNEL_CACHE=off ncu --clock-control none --cache-control none --import-source yes \
    --kernel-name ff_refine_apply_lean --launch-skip 4 --launch-count 1 --section WarpStateStats --section SourceCounters \
    -o /tmp/rep6 $X --bench-only --only B=8 --refine lean > /dev/null 2>&1
  ncu -i /tmp/rep6.ncu-rep --page source --csv --print-source cuda > /tmp/src6.csv 2>&1
  ncu -i /tmp/rep6.ncu-rep --page source --csv --print-source cuda,sass > /tmp/src6s.csv 2>&1
  python3 - /tmp/src6s.csv > "$OUT/ncu6_lean_by_line.txt" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors='replace')))
hdr = next(i for i, r in enumerate(rows) if any('Sampling (All' in c for c in r))
h = rows[hdr]; col = next(j for j, c in enumerate(h) if 'Sampling (All' in c)
def num(x):
    try: return float(x.replace(',', ''))
    except Exception: return 0.0
per_line = collections.Counter(); text = {}; cur = None
for r in rows[hdr + 1:]:
    if len(r) <= col: continue
    if r[0].strip().isdigit():  # a CUDA line's row carries the sum of its SASS rows
        cur = int(r[0]); text[cur] = r[1].strip()[:100]; per_line[cur] += num(r[col])
tot = sum(per_line.values()) or 1
print('samples', tot)
for ln, v in per_line.most_common(45): print('%6.1f%% %5d %s' % (100 * v / tot, ln, text.get(ln, '')))
PY
  head -48 "$OUT/ncu6_lean_by_line.txt"
  rm -f ff_fast.cu
  cat "$OUT"/ncu_B8.log "$OUT"/ncu_profile.log > "$OUT/ncu_kernels.txt"; rm -f "$OUT"/ncu_B8.log "$OUT"/ncu_profile.log
  cat "$OUT/table.txt"
}

HOST="env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host"
# Call 7 (issue 13): the session's ff_model build (Refine::Auto; FiLM in three launches; ff_pack's
# 4-pixel loads; every channel's rows staged in one round, with call 6's illegal address at
# C < 128 fixed): the self-check of every fast shape under auto, the C=16 shape under each refine
# path, racecheck (lean at the profile; auto at C=16), the fp16 bench against the previous build,
# then the PyTorch anchor on the plugin's export and `apex-host run --filter 'ff_model.*'` with
# the anchor's rows, in one call.
call7() {
  local X=$B/ff_model_gpu_check
  step ff_check 200 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check_c16 100 $X --only 'C=16 36x60 tiles 6/3' --refine fused,lean,split
  cat "$OUT/ff_check.log" "$OUT/ff_check_c16.log" | awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' | head -50
  step race_lean 120 compute-sanitizer --tool racecheck --print-limit 10 $X --only profile --refine lean
  step race_c16 60 compute-sanitizer --tool racecheck --print-limit 10 $X --only 'C=16 36x60 tiles 6/3' --refine auto
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|RESULT|hazard" "$OUT"/race_*.log | head -12
  cat "$OUT"/race_*.log > "$OUT/racecheck.txt"; rm -f "$OUT"/race_*.log
  step bench_old 100 $B/ff_model_gpu_check_old --bench-only --refine fused,lean
  step bench_new 100 $X --bench-only --refine auto,fused,lean
  for f in bench_old bench_new; do echo "-- $f"; grep -E "^(profile|B=8|scaling)" "$OUT/$f.log"; done
  cat "$OUT/bench_old.log" "$OUT/bench_new.log" > "$OUT/bench.txt"; rm -f "$OUT/bench_old.log" "$OUT/bench_new.log"
  step ff_export 120 $B/ff_model_export --out /tmp/ff_export
  mkdir -p /tmp/anchor; step ff_torch 300 env OUT=/tmp/anchor python3 benches/anchors/ff_model_torch.py /tmp/ff_export
  grep -E "eager|compile|reduce|parity|frames" "$OUT/ff_torch.log" | head -16
  step ff_run 200 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ff \
    --anchor-results /tmp/anchor/ff_model_torch.jsonl --format apex-x-gpu
  tail -3 "$OUT/ff_run.log"
  grep -iE "torch|frames" /tmp/ff/summary.md | head -16
  cp /tmp/ff/summary.json "$OUT/ff_summary.json"; cp /tmp/ff/summary.md "$OUT/ff_summary.md"
  cat "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log" /tmp/anchor/ff_model_torch.jsonl > "$OUT/anchor_run.txt" 2>/dev/null
  rm -f "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log"
  cat "$OUT/table.txt"
}

# Call 8 (issue 13): the depthwise 3x3 as a sliding window along each thread's run of pixels
# (three loads a pixel instead of nine): the self-check of every fast shape under auto, C=16 and
# tiles 32/16 under fused, lean and split, the fp16 bench against call 7's build (_prev) in the
# same call (twice, alternating), and racecheck on the fused and lean paths at the profile.
call8() {
  local X=$B/ff_model_gpu_check
  step ff_check 200 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check2 150 $X --only 'C=16 36x60 tiles 6/3,tiles 32/16' --refine fused,lean,split
  cat "$OUT/ff_check.log" "$OUT/ff_check2.log" | awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' | head -60
  for r in 1 2; do
    step bench_prev_$r 60 $B/ff_model_gpu_check_prev --bench-only --refine auto
    step bench_new_$r 60 $X --bench-only --refine auto,fused,lean
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8|scaling)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  step race_fused 170 compute-sanitizer --tool racecheck --print-limit 10 $X --only profile --refine fused
  step race_lean 170 compute-sanitizer --tool racecheck --print-limit 10 $X --only profile --refine lean
  grep -hE "RACECHECK SUMMARY|RESULT|hazard|^ok" "$OUT"/race_*.log | head -14
  cat "$OUT"/race_*.log > "$OUT/racecheck.txt"; rm -f "$OUT"/race_*.log
  cat "$OUT/table.txt"
}

# Call 9 (issue 13): FiLM's linears with 4 frames a block (twice the blocks at B=8) and their
# vectors' loads all in flight: the self-check of every fast shape under auto, the fp16 bench
# against call 7's build (_prev) twice, alternating, per-kernel durations at B=8, then the PyTorch
# anchor and `apex-host run --filter 'ff_model.*'` with its rows on this build.
call9() {
  local X=$B/ff_model_gpu_check
  step ff_check 200 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head -40
  for r in 1 2; do
    step bench_prev_$r 60 $B/ff_model_gpu_check_prev --bench-only --refine auto
    step bench_new_$r 60 $X --bench-only --refine auto
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8|scaling)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  step ncu_B8 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    $X --bench-only --only B=8 --refine auto
  echo "== ncu B=8"; kernel_lines "$OUT/ncu_B8.log"
  step ff_export 120 $B/ff_model_export --out /tmp/ff_export
  mkdir -p /tmp/anchor; step ff_torch 300 env OUT=/tmp/anchor python3 benches/anchors/ff_model_torch.py /tmp/ff_export
  step ff_run 200 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ff \
    --anchor-results /tmp/anchor/ff_model_torch.jsonl --format apex-x-gpu
  tail -3 "$OUT/ff_run.log"
  grep -iE "torch|frames" /tmp/ff/summary.md | head -16
  cp /tmp/ff/summary.json "$OUT/ff_summary.json"; cp /tmp/ff/summary.md "$OUT/ff_summary.md"
  cat "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log" /tmp/anchor/ff_model_torch.jsonl > "$OUT/anchor_run.txt" 2>/dev/null
  rm -f "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log"
  cat "$OUT/table.txt"
}

# Call 10 (issue 14): the nn_ops bench with a same-size copy per row (`%copy@size`: the float4 copy
# kernel moving the op's written bytes over as many buffer sets, timed the same way, over the
# op's time) for LayerNorm, GELU and Swish: how much of the gap to the 1 GiB copy line any single
# launch of that size pays.
call10() {
  local X=$B/nn_ops_gpu_check
  for op in layer_norm gelu swish; do step bench_$op 150 $X --bench-only --only $op; done
  for op in layer_norm gelu swish; do echo "-- $op"; grep -E "^(bench copy|op |$op)" "$OUT/bench_$op.log" | sed 's/  */ /g'; done
  cat "$OUT/table.txt"
}

# Call 11 (issue 13): the fused and lean kernels sharing chunk_pixels and peer_tile_stats (a
# refactor; ptxas: fp16 ff_refine_apply 122 registers, was 126): the self-check of the fast
# shapes under auto and of the profile and B=8 under fused and lean, and the fp16 bench.
call11() {
  local X=$B/ff_model_gpu_check
  step ff_check 200 $X --only 'profile,tiles 32/16,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected' --refine auto
  step ff_check2 150 $X --only 'profile,B=8' --refine fused,lean
  cat "$OUT/ff_check.log" "$OUT/ff_check2.log" | awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' | head -40
  step bench 60 $X --bench-only --refine auto,fused,lean
  grep -E "^(profile|B=8|scaling)" "$OUT/bench.log"
  cat "$OUT/table.txt"
}

# Call 12 (issue 13): ff_base on a forked stream beside selection, the L0 pack and L0 FiLM, joined
# before the first refine: the self-check of every fast shape under auto (and the profile and B=8
# under fused and lean), the fp16 bench against call 11's build (_prev) twice, alternating, then the
# PyTorch anchor and `apex-host run --filter 'ff_model.*'` with its rows.
call12() {
  local X=$B/ff_model_gpu_check
  step ff_check 200 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  awk '/^(device|ok|RESULT)/{print; f=0; next} /^FAIL/{f=1} f' "$OUT/ff_check.log" | head -40
  for r in 1 2; do
    step bench_prev_$r 60 $B/ff_model_gpu_check_prev --bench-only --refine auto
    step bench_new_$r 60 $X --bench-only --refine auto
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|B=8|scaling)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  step ff_export 120 $B/ff_model_export --out /tmp/ff_export
  mkdir -p /tmp/anchor; step ff_torch 300 env OUT=/tmp/anchor python3 benches/anchors/ff_model_torch.py /tmp/ff_export
  step ff_run 200 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ff \
    --anchor-results /tmp/anchor/ff_model_torch.jsonl --format apex-x-gpu
  tail -3 "$OUT/ff_run.log"
  grep -iE "torch|frames" /tmp/ff/summary.md | head -16
  cp /tmp/ff/summary.json "$OUT/ff_summary.json"; cp /tmp/ff/summary.md "$OUT/ff_summary.md"
  cat "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log" /tmp/anchor/ff_model_torch.jsonl > "$OUT/anchor_run.txt" 2>/dev/null
  rm -f "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log"
  cat "$OUT/table.txt"
}

# Call 13 (issue 13): apex-host with call 11's plugin (prev.so) and call 12's (fork.so: ff_base on
# a forked stream), alternating twice in one call, `run --filter 'ff_model.*'`: call 12's host
# figures were slower than call 9's while its own bench was faster.
call13() {
  for r in 1 2; do
    for v in prev fork; do
      cp .device/ab/$v.so .device/host/release/libapex_plugin_ff_model.so
      step host_${v}_$r 120 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ab_${v}_$r
      python3 - /tmp/ab_${v}_$r/summary.json $v $r <<'PY' | tee -a "$OUT/ab.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    if 'fp16' in k and 'path=fast' in k and 'height=128' in k and 'tile_size_l0=16' in k:
        print(sys.argv[2], sys.argv[3], 'batch=8' if 'batch=8' in k else 'batch=1', '%.2f us' % (c['p50_ms'] * 1e3), c['status'])
PY
    done
  done
  cat "$OUT/table.txt"
}

# Call 14 (issue 13): racecheck on the session's final build (main at de6ba12: FiLM with 4 frames a
# block, the shared chunk_pixels / peer_tile_stats), fused and lean at the profile in fp16, bf16
# and fp32.
call14() {
  local X=$B/ff_model_gpu_check
  step race_fused 150 compute-sanitizer --tool racecheck --print-limit 10 $X --only profile --refine fused
  step race_lean 200 compute-sanitizer --tool racecheck --print-limit 10 $X --only profile --refine lean
  grep -hE "RACECHECK SUMMARY|RESULT|hazard|^ok|^FAIL" "$OUT"/race_*.log | head -14
  cat "$OUT/table.txt"
}
