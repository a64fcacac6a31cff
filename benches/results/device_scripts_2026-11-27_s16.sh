#!/usr/bin/env bash
# The device calls of the sixteenth session (2026-11-27), run from the repository root on the
# device machine with the release binaries carried in .device/bin (and apex-host with its plugins
# in .device/host/release, the A/B plugin builds in .device/ab). Usage on the device:
# `source benches/results/device_scripts_2026-11-27_s16.sh; call1`. The calls ran check_all's,
# bench_ab's and ab_table's blocks inline; they are factored out here, the same commands.
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
host_ab() {  # $1: label, $2: plugin build; apex-host's ff_model suite, its fp16 fast profile and B=8
  cp .device/ab/$2.so .device/host/release/libapex_plugin_ff_model.so
  step host_$1 150 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ab_$1
  python3 - /tmp/ab_$1/summary.json $1 <<'PY' | tee -a "$OUT/ab.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    us = '%.2f us' % (c['p50_ms'] * 1e3) if 'p50_ms' in c else '-'
    print(sys.argv[2], k.split('[', 1)[-1][:90], us, c['status'])
PY
}

check_all() {  # the self-check of every fast shape under auto; with `paths`, four shapes under fused, lean and split too
  local X=$B/ff_model_gpu_check logs=("$OUT/ff_check.log")
  step ff_check 240 $X --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  if [ "${1:-}" = paths ]; then
    step ff_check_paths 200 $X --only 'profile,B=8,C=16 36x60 tiles 6/3,tiles 32/16' --refine fused,lean,split
    logs+=("$OUT/ff_check_paths.log")
  fi
  cat "${logs[@]}" | grep -cE "^ok"
  cat "${logs[@]}" | awk '/^(RESULT)/{print; f=0; next} /^FAIL/{f=1} f' | head -20
}
bench_ab() {  # $1: the new build's label, $2: --only shapes (none: the bench's own); in process, twice, against prev
  for r in 1 2; do
    step bench_prev_$r 60 $B/ff_model_gpu_check_prev --bench-only ${2:+--only $2} --refine auto
    step bench_$1_$r 60 $B/ff_model_gpu_check --bench-only ${2:+--only $2} --refine auto
  done
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|256x256|B=8)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
}
ab_table() {  # host_ab's rows as a table: a column per build and round, a row per case
  python3 - "$OUT/ab.txt" <<'PY'
import collections, sys
names = ['bf16 profile', 'fp16 eager', 'fp16 profile', 'fp16 tiles32/16', 'fp16 256x256', 'fp16 B=8', 'fp32 profile']
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split(); rows[p[0]].append(p[-3])
labels = list(rows)
print('%-16s' % 'case', *['%8s' % l for l in labels])
for i, n in enumerate(names): print('%-16s' % n, *['%8s' % rows[l][i] for l in labels])
PY
}

# Call 1 (issue 13): no packed copies (the token means and the refines read each level's tiles
# in place: L0 in the input map, L1 in the L0 result), the L0 result kept only at split tiles,
# and ff_base four bands a block with its loads in flight. The self-check of every fast shape
# under auto and of four shapes under fused, lean and split; the in-process bench against the
# committed build (prev = 14eed9a), twice; Nsight Compute's B=8 durations; apex-host's suite with
# each plugin build.
call1() {
  local X=$B/ff_model_gpu_check
  check_all paths
  bench_ab new
  step ncu_B8 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum $X --bench-only --only B=8 --refine auto
  grep -E "^  ff_|gpu__time_duration" "$OUT/ncu_B8.log" | sed 's/(int, [^)]*)//' | paste - - | awk '{print $1, $(NF)}'
  host_ab prev ff_prev; host_ab new ff_new
  cat "$OUT/table.txt"
}

# Call 2 (issue 13): call 1's build had ff_base unchanged in speed (34.3 us at B=8 against 33.7)
# and the token means at 13.9 / 10.8 us. Now the means take four channels a warp in 16-byte runs
# (new2); new3 is new2 with one band an ff_base block (BASE_BANDS 1). The self-check of every
# fast shape (new2), the in-process bench against the committed build twice, Nsight Compute's
# B=8 durations, then apex-host's suite with prev, new (call 1's), new2 and new3, twice.
call2() {
  local X=$B/ff_model_gpu_check
  check_all
  bench_ab new2
  step ncu_B8 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum $X --bench-only --only B=8 --refine auto
  grep -E "^  ff_|gpu__time_duration" "$OUT/ncu_B8.log" | sed 's/(int, [^)]*)//' | paste - - | awk '{print $1, $(NF)}'
  for r in 1 2; do for v in prev new new2 new3; do host_ab ${v}_$r ff_$v > /dev/null; done; done
  python3 - "$OUT/ab.txt" <<'PY'
import collections, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    parts = line.split()  # label, case, p50, "us", status
    rows[' '.join(parts[1:-3])][parts[0]] = parts[-3]
labels = ['prev_1', 'new_1', 'new2_1', 'new3_1', 'prev_2', 'new_2', 'new2_2', 'new3_2']
print('case', *labels)
for case, r in sorted(rows.items()):
    print(case[:60], *(r.get(l, '-') for l in labels))
PY
  cat "$OUT/table.txt"
}

# Call 3 (issue 13): where call 2's builds lose at B=1 (256x256 +6 us, the profile +1.5 us):
# Nsight Compute's kernel durations at 256x256 and at the profile for prev, new2 and new4 (new2
# with one channel a warp in the means, 16-byte runs: MEANS_CHANNELS 1), their in-process bench
# on the profile, 256x256 and B=8, then apex-host's suite with prev, new2 and new4, twice.
ncu_durations() {  # $1: label, $2: binary, $3: shape
  step ncu_$1 100 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum $2 --bench-only --only "$3" --refine auto
  grep -E "^  ff_|gpu__time_duration" "$OUT/ncu_$1.log" | sed 's/(int, [^)]*)//' | paste - - | awk -v l=$1 '{print l, $1, $(NF)}' >> "$OUT/ncu.txt"
  rm -f "$OUT/ncu_$1.log"
}
call3() {
  for v in prev new2 new4; do
    local X=$B/ff_model_gpu_check; [ $v = prev ] && X=$B/ff_model_gpu_check_prev; [ $v = new4 ] && X=$B/ff_model_gpu_check_new4
    ncu_durations ${v}_256 $X 256x256
    ncu_durations ${v}_prof $X profile
    step bench_$v 60 $X --bench-only --only profile,256x256,B=8 --refine auto
  done
  python3 - "$OUT/ncu.txt" <<'PY'
import collections, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    l, k, d = line.split(); t[l].append((k, d))
labels = list(t)
print('kernel', *labels)
for i in range(max(len(v) for v in t.values())):
    print(t[labels[0]][i][0], *(t[l][i][1] if i < len(t[l]) else '-' for l in labels))
PY
  for f in "$OUT"/bench_*.log; do echo "-- $(basename $f)"; grep -E "^(profile|256x256|B=8)" "$f"; done
  cat "$OUT"/bench_*.log > "$OUT/bench.txt"; rm -f "$OUT"/bench_*.log
  for r in 1 2; do for v in prev new2 new4; do host_ab ${v}_$r ff_$v > /dev/null; done; done
  ab_table
  rm -f "$OUT"/host_*.log
  cat "$OUT/table.txt"
}

# Call 4 (issue 13): call 3 showed the in-place reads cost B=1 (the fused L1 refine 14.3 -> 19.2
# us at the profile under Nsight Compute, the 256x256 frame +5 us). new5: the packs are back, but
# L0's packed tiles are 16-bit in fp16 and bf16 (exact copies of the map's values: half the bytes
# to write and to stage), the pack moves 16-byte runs, L0 keeps its f32 result only at split
# tiles, ff_base as committed. The self-check of every fast shape under auto and of four under
# fused, lean and split; the in-process bench against prev twice; Nsight Compute at B=8 and at
# 256x256; apex-host's suite with prev, new2 and new5, twice.
call4() {
  local X=$B/ff_model_gpu_check
  check_all paths
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" > "$OUT/checks.txt"; rm -f "$OUT/ff_check.log" "$OUT/ff_check_paths.log"
  bench_ab new5 profile,256x256,B=8
  ncu_durations prev_B8 $B/ff_model_gpu_check_prev B=8
  ncu_durations new5_B8 $X B=8
  ncu_durations prev_256 $B/ff_model_gpu_check_prev 256x256
  ncu_durations new5_256 $X 256x256
  python3 - "$OUT/ncu.txt" <<'PY'
import collections, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    l, k, d = line.split(); t[l].append((k, d))
labels = list(t)
print('kernel', *labels)
for i in range(max(len(v) for v in t.values())):
    print(*(t[l][i][0] if i < len(t[l]) else '-' for l in labels[:2]), *(t[l][i][1] if i < len(t[l]) else '-' for l in labels))
PY
  for r in 1 2; do for v in prev new2 new5; do host_ab ${v}_$r ff_$v > /dev/null; done; done
  ab_table
  rm -f "$OUT"/host_*.log
  cat "$OUT/table.txt"
}

# Call 5 (issue 13): why the fused L1 refine takes 14.4 -> 19.9 us at B=1 in new5 (and new2)
# while the lean one at B=8 did not change: Nsight Compute's sections for both levels' refine of
# one profile frame, prev against new5.
call5() {
  for v in prev new5; do
    local X=$B/ff_model_gpu_check; [ $v = prev ] && X=$B/ff_model_gpu_check_prev
    step ncu_full_$v 150 ncu --clock-control none --cache-control none --kernel-name regex:ff_refine_apply --launch-skip 2 --launch-count 2 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy \
      --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables $X --bench-only --only profile --refine auto
  done
  for v in prev new5; do echo "== $v"; grep -E "^  ff_|Duration|Registers|Achieved Occupancy|L1/TEX Hit|L2 Hit|Warp Cycles Per Issued|Executed Instructions  |Memory Throughput|Dynamic Shared|Block Limit|Waves|Stall|Shared Memory Configuration" "$OUT/ncu_full_$v.log" | head -60; done
  cat "$OUT/table.txt"
}

# Call 6 (issue 13): is the L0 result's skip at unsplit tiles (keeps_l0) what costs 256x256 +5
# us? new6 = new5 writing l0map at every L0 tile again. apex-host's suite with prev, new5 and
# new6, three rounds.
call6() {
  for r in 1 2 3; do for v in prev new5 new6; do host_ab ${v}_$r ff_$v > /dev/null; done; done
  ab_table
  rm -f "$OUT"/host_*.log
  cat "$OUT/table.txt"
}

# Call 7 (issue 13): is it instruction fetch? new5 runs L0's and L1's refine as two functions
# (`_s`, `_f`), prev as one. dup = prev with L1's fused refine a second, identical entry point
# (ff_refine_apply_l1); new9 = new5 with fp32 running L1 on the `_s` kernels (S is f32 there).
# apex-host's suite with prev, dup, new5 and new9, three rounds.
call7() {
  for r in 1 2 3; do for v in prev dup new5 new9; do host_ab ${v}_$r ff_$v > /dev/null; done; done
  ab_table
  rm -f "$OUT"/host_*.log
  cat "$OUT/table.txt"
}

# Call 8 (issue 13): the one piece of new5 that costs nothing in code size: ks = the committed
# kernels, with the fused and lean refines writing L0's f32 result (l0map) only at split tiles
# (ff_select's coverage map; the split path's ff_apply unchanged). The self-check of every fast
# shape under auto and of four under fused, lean and split; the in-process bench against prev
# twice; apex-host's suite with prev and ks, three rounds.
call8() {
  check_all paths
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" > "$OUT/checks.txt"; rm -f "$OUT/ff_check.log" "$OUT/ff_check_paths.log"
  bench_ab ks profile,256x256,B=8
  for r in 1 2 3; do for v in prev ks; do host_ab ${v}_$r ff_$v > /dev/null; done; done
  ab_table
  rm -f "$OUT"/host_*.log
  cat "$OUT/table.txt"
}

# Call 9 (issue 13): compute-sanitizer on the landed build (ks): memcheck of the fused and lean
# refines at the profile and B=8 (the new read of ff_select's coverage map), racecheck of both at
# the profile (their shared-memory code is unchanged).
call9() {
  local X=$B/ff_model_gpu_check
  step memcheck 330 compute-sanitizer --tool memcheck --print-limit 10 $X --only 'profile,B=8' --refine fused,lean
  step race_fused 120 compute-sanitizer --tool racecheck --print-limit 10 $X --only profile --refine fused
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|RESULT|hazard|^ok|^FAIL" "$OUT"/memcheck.log "$OUT"/race_fused.log | head -30
  cat "$OUT/table.txt"
}

# Call 10 (issue 13, for the next plan): Nsight Compute's sections for the kernels that scale
# worst besides the refines, at B=8 on the landed build: ff_base (33.5 us for ~75 MB, mostly
# writes) and FiLM's two linears (8 + 10 us a level at B=8 against 5.5 + 5.2 at B=1).
call10() {
  step ncu_b8_base_film 200 ncu --clock-control none --cache-control none --kernel-name regex:'ff_base|ff_film_fc1|ff_film_out' \
    --launch-skip 5 --launch-count 5 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section LaunchStats --section Occupancy --section SchedulerStats $B/ff_model_gpu_check --bench-only --only B=8 --refine auto
  grep -E "^  ff_|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots|No Eligible" "$OUT/ncu_b8_base_film.log" | head -60
  cat "$OUT/table.txt"
}
