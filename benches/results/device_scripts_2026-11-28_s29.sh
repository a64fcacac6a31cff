#!/usr/bin/env bash
# Twenty-ninth session (2026-11-28): where the wgmma refine's time goes at B=8, and variants.
# Usage on the device machine: bash benches/results/device_scripts_2026-11-28_s29.sh callN
# The experiment builds (ff_x1 .. ff_x5) were intermediate states of the working tree, not
# committed: each switch below is described by what it did; the landed code (4da06f8) is the
# winners made unconditional (WG_PAIR, WG_FIN, WG_SBO_PAD) and WG_DIRECT's successor (the
# pack-free levels with the map scan, ff_x5's host side, without any switch).
# Binaries in .device/bin (ff_model_gpu_check builds): ff_x1 (branch exp29: main 1991bcc plus
# experiment switches in cuda/fast/refine_wg.cu, chosen at run time by APEX_NVRTC_DEFINES; with
# none it compiles main's kernels, the host's WG_SMEM 512 bytes larger for WG_SBO_PAD):
#   WG_TRACE        per-CTA phase timestamps (clock64, globaltimer), printed for 2000 CTAs
#   WG_HOIST        every builder unit's rows loaded before any is computed
#   WG_SBO_PAD      the operand's 8-pixel groups 32 bytes further apart (no 2-way store conflict)
# ff_x2: ff_x1 plus WG_DIRECT (with APEX_FF_WG_DIRECT=1 on the host side): the wgmma refine reads
# the level's source map itself (L0 the fp16 input, L1 l0map), the packs write only the token
# means, with plain loads instead of evict-first.
# ff_x4: ff_x2 plus benches/results/ff_model_stage_skip_experiment_s27.patch (APEX_FF_SKIP) and
#   WG_PAIR         t = 16: a builder unit takes two adjacent channels (their hi and lo parts
#                   converted and stored as pairs); WG_HOIST removed (it lost in call 1)
#   WG_FIN          the finish without per-pair offsets from shared memory or 64-bit offset math,
#                   one copy per level kind (L1 detail, L0 with or without l0map), no branches
# ff_x5: ff_x4 with APEX_FF_WG_DIRECT's host side now also skipping the wgmma levels' pack
#   launches: ff_film_scan_map_* take each tile's channel means from the source map themselves
#   (the pack's sums in the pack's order), then scan
# ff_main: main (1991bcc) rebuilt; ff_final: the landed code (the variants above made the code:
#   WG_PAIR, WG_FIN, WG_SBO_PAD always; the pack-free levels (map scan, map refine) where a call
#   runs in several runs of frames). .device/ab/{main,final}.so: the same two as plugin builds
#   for apex-host (.device/host/release).
source benches/results/device_lib.sh
SHAPES='profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'

trace_summary() {  # $1: log with WGT lines; per tile size: phases (cycles after entry), lifetimes
  python3 - "$1" <<'PY'
import sys, statistics as st, collections
rows = [l.split() for l in open(sys.argv[1]) if l.startswith('WGT ')]
by = collections.defaultdict(list)
for r in rows: by[int(r[1])].append(r)
names = ['film', 'build', 'sync', 'gemm', 'partial', 'push+px', 'stats', 'finish']
for t, rs in sorted(by.items()):
    ts = [[int(x) for x in r[9:17]] for r in rs]
    life = [(int(r[8]) - int(r[7])) / 1e3 for r in rs]
    med = [st.median(x[i] for x in ts) for i in range(8)]
    print('t=%d ctas=%d lifetime us median %.2f mean %.2f p90 %.2f' % (t, len(rs), st.median(life), st.mean(life), sorted(life)[int(.9*len(life))]))
    print('   cumulative cycles (median):', ' '.join('%s %d' % (n, m) for n, m in zip(names, med)))
    print('   phase cycles (median of deltas):', ' '.join('%s %d' % (names[i], st.median(x[i] - (x[i-1] if i else 0) for x in ts)) for i in range(8)))
    # CTAs resident with each one on its SM (by globaltimer overlap)
    sm = collections.defaultdict(list)
    for r in rs: sm[r[3]].append((int(r[7]), int(r[8])))
    ov = []
    for v in sm.values():
        for a in v: ov.append(sum(1 for b in v if b[0] < a[1] and a[0] < b[1]))
    print('   co-resident CTAs (incl. itself) mean %.2f' % st.mean(ov))
allr = [(int(r[7]), int(r[8]), int(r[1])) for r in rows]
if allr:
    g0 = min(a for a, _, _ in allr)
    print('span of traced CTAs %.1f us' % ((max(b for _, b, _ in allr) - g0) / 1e3))
PY
}

call1() {  # verify main's kernels (no switches); trace; A/B of HOIST and SBO_PAD; ncu of main
  step check_wg 240 $B/ff_x1 --only "$SHAPES" --refine wg --precision fp16
  echo "main wg: ok $(grep -cE '^ok' $OUT/check_wg.log) FAIL $(grep -cE '^FAIL' $OUT/check_wg.log)" | tee -a $OUT/sweep.txt
  check_auto main 300 $B/ff_x1 "$SHAPES"
  for d in "WG_HOIST WG_SBO_PAD"; do
    APEX_NVRTC_DEFINES="$d" $B/ff_x1 --only "$SHAPES" --refine wg --precision fp16 > /tmp/c.log 2>&1
    echo "[$d] wg: ok $(grep -cE '^ok' /tmp/c.log) FAIL $(grep -cE '^FAIL' /tmp/c.log)" | tee -a $OUT/sweep.txt
  done
  for s in refines frame; do
    APEX_NVRTC_DEFINES="WG_TRACE WG_TRACE_FROM=30000" $B/ff_x1 --bench-only --only B=8 --refine auto --stage $s > $OUT/trace_b8_$s.log 2>&1
    APEX_NVRTC_DEFINES="WG_TRACE WG_TRACE_FROM=3000" $B/ff_x1 --bench-only --only profile --refine auto --stage $s > $OUT/trace_b1_$s.log 2>&1
    for b in b8 b1; do echo "== trace $b $s"; trace_summary $OUT/trace_${b}_$s.log; done | tee -a $OUT/trace.txt
  done
  for r in 1 2; do
    for d in "" WG_HOIST WG_SBO_PAD "WG_HOIST WG_SBO_PAD"; do
      APEX_NVRTC_DEFINES="$d" $B/ff_x1 --bench-only --only 'profile,B=8' --refine auto --stage refines > /tmp/o.log 2>&1
      echo "stage [$d] r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
      APEX_NVRTC_DEFINES="$d" $B/ff_x1 --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
      echo "frame [$d] r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    done
  done
  step ncu_wg16 200 ncu --kernel-name regex:ff_refine_wg_c128_t16 --launch-skip 40 --launch-count 1 \
    --cache-control none --clock-control none --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --metrics regex:smsp__pcsamp_warps_issue_stalled_.* $B/ff_x1 --bench-only --only B=8 --refine auto
  grep -E "Duration|Elapsed|SM Active|Warp Cycles Per Issued|No Eligible|Active Warps Per|Achieved Occ|L1/TEX Hit|L2 Hit|Memory Throughput|Issued Ipc" $OUT/ncu_wg16.log | head -20
  grep -E "pcsamp_warps_issue_stalled" $OUT/ncu_wg16.log | grep -v not_issued | sort -k3 -n -r | head -14
  cat $OUT/table.txt
}
call2() {  # WG_DIRECT: checks, A/B against main's kernels (same binary), trace
  # the host side of WG_DIRECT goes with the define
  dx() { case "$1" in *WG_DIRECT*) echo APEX_FF_WG_DIRECT=1;; *) echo APEX_FF_NONE=1;; esac; }
  for d in "WG_DIRECT" "WG_DIRECT WG_SBO_PAD"; do
    env $(dx "$d") APEX_NVRTC_DEFINES="$d" $B/ff_x2 --only "$SHAPES" --refine wg --precision fp16 > /tmp/c.log 2>&1
    echo "[$d] wg: ok $(grep -cE '^ok' /tmp/c.log) FAIL $(grep -cE '^FAIL' /tmp/c.log)" | tee -a $OUT/sweep.txt
    grep -E '^FAIL' -A3 /tmp/c.log | head -8
  done
  APEX_FF_WG_DIRECT=1 APEX_NVRTC_DEFINES="WG_DIRECT" $B/ff_x2 --only "$SHAPES" --refine auto > /tmp/c.log 2>&1
  echo "[WG_DIRECT] auto: ok $(grep -cE '^ok' /tmp/c.log) FAIL $(grep -cE '^FAIL' /tmp/c.log)" | tee -a $OUT/sweep.txt
  for r in 1 2; do
    for d in "" WG_DIRECT "WG_DIRECT WG_SBO_PAD"; do
      env $(dx "$d") APEX_NVRTC_DEFINES="$d" $B/ff_x2 --bench-only --only 'profile,B=8' --refine auto --stage refines > /tmp/o.log 2>&1
      echo "stage [$d] r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
      env $(dx "$d") APEX_NVRTC_DEFINES="$d" $B/ff_x2 --bench-only --only 'profile,B=8,256x256,tiles 32/16' --refine auto > /tmp/o.log 2>&1
      echo "frame [$d] r$r: $(grep -E '^(profile|B=8|256x256|tiles 32/16) ' /tmp/o.log | sed -E 's/^tiles /tiles_/' | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    done
  done
  APEX_FF_WG_DIRECT=1 APEX_NVRTC_DEFINES="WG_DIRECT WG_TRACE WG_TRACE_FROM=30000" $B/ff_x2 --bench-only --only B=8 --refine auto --stage refines > /tmp/tr.log 2>&1
  echo "== trace direct b8 refines"; trace_summary /tmp/tr.log | tee -a $OUT/trace.txt
  APEX_FF_WG_DIRECT=1 APEX_NVRTC_DEFINES="WG_DIRECT WG_TRACE WG_TRACE_FROM=30000" $B/ff_x2 --bench-only --only B=8 --refine auto > /tmp/tr.log 2>&1
  echo "== trace direct b8 frame"; trace_summary /tmp/tr.log | tee -a $OUT/trace.txt
}
call3() {  # WG_FIN, WG_PAIR: checks, A/B, instruction counts; then the stage table of main's kernels
  step check_fin 100 env APEX_NVRTC_DEFINES="WG_FIN" $B/ff_x4 --only "$SHAPES" --refine wg --precision fp16
  echo "[WG_FIN] wg: ok $(grep -cE '^ok' $OUT/check_fin.log) FAIL $(grep -cE '^FAIL' $OUT/check_fin.log)" | tee -a $OUT/sweep.txt
  step check_all3 100 env APEX_NVRTC_DEFINES="WG_PAIR WG_FIN WG_SBO_PAD" $B/ff_x4 --only "$SHAPES" --refine wg --precision fp16
  echo "[WG_PAIR WG_FIN WG_SBO_PAD] wg: ok $(grep -cE '^ok' $OUT/check_all3.log) FAIL $(grep -cE '^FAIL' $OUT/check_all3.log)" | tee -a $OUT/sweep.txt
  grep -hE '^FAIL' -A3 $OUT/check_fin.log $OUT/check_all3.log | head -8
  for r in 1 2; do
    for d in "" WG_FIN "WG_PAIR WG_SBO_PAD" "WG_PAIR WG_FIN WG_SBO_PAD"; do
      APEX_NVRTC_DEFINES="$d" timeout 60 $B/ff_x4 --bench-only --only 'profile,B=8' --refine auto --stage refines > /tmp/o.log 2>&1
      echo "stage [$d] r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
      APEX_NVRTC_DEFINES="$d" timeout 60 $B/ff_x4 --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
      echo "frame [$d] r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    done
  done
  for d in "" WG_FIN "WG_PAIR WG_FIN WG_SBO_PAD"; do
    for k in t16 t8; do
      APEX_NVRTC_DEFINES="$d" timeout 60 ncu --kernel-name regex:ff_refine_wg_c128_$k --launch-skip 40 --launch-count 1 \
        --cache-control none --clock-control none --metrics smsp__inst_executed.sum,gpu__time_duration.sum,sm__cycles_active.avg,launch__grid_size \
        $B/ff_x4 --bench-only --only B=8 --refine auto > /tmp/n.log 2>&1
      echo "ncu [$d] $k: $(grep -E 'inst_executed|duration|cycles_active|grid_size' /tmp/n.log | awk '{print $1, $NF}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    done
  done
  for skip in none base pack0,pack1 film0,film1 refine0 refine1 refine0,refine1 base,refine0,refine1; do
    APEX_FF_SKIP=$skip timeout 60 $B/ff_x4 --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
    echo "skip $skip: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
  done
  cat $OUT/table.txt
}
call4() {  # call 3 again after its fix (the finish's "mean" declared twice without WG_FIN made
  # every run without WG_FIN fail at setup): A/B, instruction counts, the stage table
  for r in 1 2; do
    for d in "" WG_SBO_PAD WG_FIN "WG_PAIR WG_FIN WG_SBO_PAD"; do
      APEX_NVRTC_DEFINES="$d" timeout 60 $B/ff_x4 --bench-only --only 'profile,B=8' --refine auto --stage refines > /tmp/o.log 2>&1
      echo "stage [$d] r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
      APEX_NVRTC_DEFINES="$d" timeout 60 $B/ff_x4 --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
      echo "frame [$d] r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    done
  done
  for k in t16 t8; do
    timeout 60 ncu --kernel-name regex:ff_refine_wg_c128_$k --launch-skip 40 --launch-count 1 \
      --cache-control none --clock-control none --metrics smsp__inst_executed.sum,gpu__time_duration.sum,sm__cycles_active.avg,launch__grid_size \
      $B/ff_x4 --bench-only --only B=8 --refine auto > /tmp/n.log 2>&1
    echo "ncu [] $k: $(grep -E 'inst_executed|duration|cycles_active|grid_size' /tmp/n.log | awk '{print $1, $NF}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
  done
  for skip in none base pack0,pack1 film0,film1 refine0 refine1 refine0,refine1 base,refine0,refine1; do
    APEX_FF_SKIP=$skip timeout 60 $B/ff_x4 --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
    echo "skip $skip: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
  done
}
call5() {  # the pack-free wgmma levels (DIRECT + the map scan): checks, then A/B in process
  local best="WG_PAIR WG_FIN WG_SBO_PAD"
  step check_direct 100 env APEX_FF_WG_DIRECT=1 APEX_NVRTC_DEFINES="WG_DIRECT $best" $B/ff_x5 --only "$SHAPES" --refine wg --precision fp16
  echo "[direct $best] wg: ok $(grep -cE '^ok' $OUT/check_direct.log) FAIL $(grep -cE '^FAIL' $OUT/check_direct.log)" | tee -a $OUT/sweep.txt
  grep -E '^FAIL|error' -A3 $OUT/check_direct.log | head -12
  step check_direct_auto 150 env APEX_FF_WG_DIRECT=1 APEX_NVRTC_DEFINES="WG_DIRECT $best" $B/ff_x5 --only "$SHAPES" --refine auto
  echo "[direct $best] auto: ok $(grep -cE '^ok' $OUT/check_direct_auto.log) FAIL $(grep -cE '^FAIL' $OUT/check_direct_auto.log)" | tee -a $OUT/sweep.txt
  for r in 1 2; do
    for v in main best direct; do
      case $v in main) e="APEX_FF_NONE=1"; d="";; best) e="APEX_FF_NONE=1"; d="$best";; direct) e="APEX_FF_WG_DIRECT=1"; d="WG_DIRECT $best";; esac
      env $e APEX_NVRTC_DEFINES="$d" timeout 60 $B/ff_x5 --bench-only --only 'profile,B=8,256x256,tiles 32/16,B=3' --refine auto > /tmp/o.log 2>&1
      echo "frame $v r$r: $(grep -E '^(profile|B=[0-9]|256x256|tiles 32/16) ' /tmp/o.log | sed -E 's/^tiles /tiles_/' | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    done
  done
}
call6() {  # the landed build: self-check under auto (27), in process against main, apex-host
  check_auto final 160 $B/ff_final "$SHAPES"
  for v in ff_main ff_final; do
    timeout 60 $B/$v --bench-only --only 'profile,B=3,B=8,256x256,tiles 32/16' --refine auto > /tmp/o.log 2>&1
    echo "frame $v: $(grep -E '^(profile|B=[0-9]|256x256|tiles 32/16) ' /tmp/o.log | sed -E 's/^tiles /tiles_/' | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
  done
  host_ab main main
  host_ab final final
  ab_table | tee $OUT/ab_table.txt
  cat $OUT/table.txt
}
call7() {  # call 6's failure fixed (the map refines' shared memory opted in past 48 KiB): the
  # pack-free case's self-check (B=8, fp16) and the profile's, then in process against main
  $B/ff_final --only 'profile,B=8' --refine auto --precision fp16 > $OUT/check7.log 2>&1
  echo "final fp16 profile,B=8: ok $(grep -cE '^ok' $OUT/check7.log) FAIL $(grep -cE '^FAIL' $OUT/check7.log)"; grep -E '^FAIL' -A2 $OUT/check7.log | head -6
  for v in ff_main ff_final; do
    timeout 30 $B/$v --bench-only --only 'profile,B=3,B=8' --refine auto > /tmp/o.log 2>&1
    echo "frame $v: $(grep -E '^(profile|B=[0-9]) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
  done
}
"$@"
