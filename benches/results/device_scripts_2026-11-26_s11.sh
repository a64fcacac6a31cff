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
src = next((j for j, c in enumerate(h) if c.strip().lower() in ('source', 'address', '# source')), 1)
ln = next((j for j, c in enumerate(h) if c.strip() in ('#', 'Line', '# Line')), 0)
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
