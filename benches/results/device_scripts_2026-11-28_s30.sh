#!/usr/bin/env bash
# Thirtieth session (2026-11-28): B=8's schedule. Usage on the device machine:
#   bash benches/results/device_scripts_2026-11-28_s30.sh callN
# Binary .device/bin/ff_x30 (ff_model_gpu_check of branch exp30: main d5cc208 plus experiment
# switches, none of which changes anything unless set):
#   APEX_FF_STAGGER=bits   graph edges between runs: 1 run r's L0 FiLM chain after run r-1's,
#                          2 run r's refine after run r-1's (same level), 4 run r's L1 FiLM chain
#                          after run r-1's
#   APEX_FF_RUN_FRAMES=n   runs of about n frames instead of 3
#   APEX_FF_PACK_FREE=0|1  pack-free wgmma levels forced off / on (default: when runs > 1)
#   APEX_NVRTC_DEFINES=WG_DEPHASE=ns  a wgmma refine CTA starting within ns of the last start on
#                          its SM waits until ns past it
source benches/results/device_lib.sh

trace_detail() {  # $1: log with WGT lines: lifetimes, the slow CTAs' phases, co-resident starts
  python3 - "$1" <<'PY'
import sys, statistics as st, collections
rows = [l.split() for l in open(sys.argv[1]) if l.startswith('WGT ')]
names = ['film', 'build', 'sync', 'gemm', 'partial', 'push+px', 'stats', 'finish']
by = collections.defaultdict(list)
for r in rows: by[int(r[1])].append(r)
for t, rs in sorted(by.items()):
    life = [(int(r[8]) - int(r[7])) for r in rs]
    cyc = [int(r[16]) for r in rs]
    ghz = st.median(c / l for c, l in zip(cyc, life) if l > 0)
    med = st.median(life)
    print('t=%d ctas=%d life ns p10 %d p50 %d p90 %d p99 %d max %d; cycles/ns %.2f' % (
        t, len(rs), *(sorted(life)[int(q * (len(life) - 1))] for q in (.1, .5, .9, .99, 1.0)), ghz))
    slow = [r for r, l in zip(rs, life) if l > 2 * med]
    if slow:
        ts = [[int(x) for x in r[9:17]] for r in slow]
        d = [[x[i] - (x[i - 1] if i else 0) for i in range(8)] for x in ts]
        print('   %d slow (> 2x median): median phase cycles %s; unaccounted ns (life - cycles/rate) median %d' % (
            len(slow), ' '.join('%s %d' % (n, st.median(v[i] for v in d)) for i, n in enumerate(names)),
            st.median((int(r[8]) - int(r[7])) - int(r[16]) / ghz for r in slow)))
    # co-resident pairs: start offset over the earlier one's lifetime
    sm = collections.defaultdict(list)
    for r in rs: sm[r[3]].append((int(r[7]), int(r[8])))
    offs = []
    for v in sm.values():
        v.sort()
        for i, a in enumerate(v):
            for b in v[i + 1:]:
                if b[0] >= a[1]: break
                offs.append((b[0] - a[0]) / max(1, a[1] - a[0]))
    if offs:
        h = collections.Counter(min(9, int(o * 10)) for o in offs)
        print('   co-resident pairs %d: start offset / lifetime in tenths %s' % (len(offs), ' '.join('%d:%d' % (k, h[k]) for k in range(10))))
PY
}

call1() {  # trace B=8; stagger, run length, pack-free and de-phase sweeps (in process)
  S='profile,B=3,B=8'
  APEX_NVRTC_DEFINES="WG_TRACE WG_TRACE_FROM=30000" $B/ff_x30 --bench-only --only B=8 --refine auto > /tmp/tr.log 2>&1
  grep '^WGT' /tmp/tr.log | gzip > $OUT/trace_b8_frame.txt.gz
  echo "== trace b8 frame"; trace_detail /tmp/tr.log | tee -a $OUT/trace.txt
  APEX_FF_STAGGER=3 APEX_NVRTC_DEFINES="WG_TRACE WG_TRACE_FROM=30000" $B/ff_x30 --bench-only --only B=8 --refine auto > /tmp/tr.log 2>&1
  echo "== trace b8 frame stagger 3"; trace_detail /tmp/tr.log | tee -a $OUT/trace.txt
  check_auto stagger7 200 "env APEX_FF_STAGGER=7 $B/ff_x30" 'profile,B=3,B=8'
  for r in 1 2; do
    bench_row "base r$r" $B/ff_x30 "$S" APEX_NONE=1
    for g in 1 2 3 4 5 7; do bench_row "stagger$g r$r" $B/ff_x30 "$S" APEX_FF_STAGGER=$g; done
    for n in 2 4; do
      bench_row "runs$n r$r" $B/ff_x30 "$S" APEX_FF_RUN_FRAMES=$n
      bench_row "runs$n stagger3 r$r" $B/ff_x30 "$S" APEX_FF_RUN_FRAMES=$n APEX_FF_STAGGER=3
    done
    bench_row "runs8 packfree r$r" $B/ff_x30 "$S" APEX_FF_RUN_FRAMES=8 APEX_FF_PACK_FREE=1
    bench_row "packfree-all r$r" $B/ff_x30 "$S" APEX_FF_PACK_FREE=1
    for d in 2000 3500; do bench_row "dephase$d r$r" $B/ff_x30 "$S" APEX_NVRTC_DEFINES=WG_DEPHASE=$d; done
  done
  cat $OUT/table.txt
}


kernel_table() {  # $1: ncu csv log: per launch name, grid, duration (us)
  python3 - "$1" <<'PY'
import sys, csv, collections
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
hdr = rows[0]; rows = rows[1:]
ki, gi, mi, vi = hdr.index('Kernel Name'), hdr.index('Grid Size'), hdr.index('Metric Name'), hdr.index('Metric Value')
tot = 0.0; agg = collections.OrderedDict()
for r in rows:
    if r[mi] != 'gpu__time_duration.sum': continue
    us = float(r[vi].replace(',', '')) / 1e3; tot += us
    name = r[ki].split('(')[0]
    print('  %-34s %-16s %8.2f' % (name, r[gi], us))
    a = agg.setdefault(name, [0, 0.0]); a[0] += 1; a[1] += us
print('  by kernel:', '; '.join('%s x%d %.1f' % (k, n, u) for k, (n, u) in agg.items()))
print('  sum of isolated launches %.2f us' % tot)
PY
}

call2() {  # each launch of one call alone (ncu, graph nodes one by one): profile, B=8, B=8 in one run
  prof() {  # $1 label, $2 launches a call, then env
    local label=$1 n=$2; shift 2
    env "$@" timeout 120 ncu --csv --cache-control none --clock-control none --launch-skip $((20 * n)) --launch-count $n \
      --metrics gpu__time_duration.sum $B/ff_x30 --bench-only --only "$SHAPE" --refine auto > $OUT/ncu_$label.csv 2>&1
    echo "== $label"; kernel_table $OUT/ncu_$label.csv
  }
  SHAPE=profile prof b1 12 APEX_NONE=1 | tee -a $OUT/kernels.txt
  SHAPE=B=8 prof b8 26 APEX_NONE=1 | tee -a $OUT/kernels.txt
  SHAPE=B=8 prof b8_run8_packfree 10 APEX_FF_RUN_FRAMES=8 APEX_FF_PACK_FREE=1 | tee -a $OUT/kernels.txt
  SHAPE=B=8 prof b8_run8 12 APEX_FF_RUN_FRAMES=8 | tee -a $OUT/kernels.txt
  for r in 1 2; do
    bench_row "base r$r" $B/ff_x30 'profile,B=8' APEX_NONE=1
    bench_row "runs8 r$r" $B/ff_x30 'profile,B=8' APEX_FF_RUN_FRAMES=8
  done
}

# ff_x30b: ff_x30 plus the map scan's warps splitting a channel's tiles: SCAN_MAP_CHANNELS
# channels a block (2 by default; APEX_NVRTC_DEFINES=SCAN_MAP_CHANNELS=n with APEX_FF_SMC=n on
# the host side; n = 8 is ff_x30's kernel: a warp a channel over all its tiles).
call3() {  # the split map scan: checks, then B=1/3/8 with and without pack-free everywhere
  X=$B/ff_x30b
  check_auto smc2 150 "$X" 'profile,B=3,B=8,256x256,tiles 32/16'
  check_auto smc2_pf 150 "env APEX_FF_PACK_FREE=1 $X" 'profile,B=3,B=8,256x256,tiles 32/16'
  check_auto smc1_pf 100 "env APEX_FF_PACK_FREE=1 APEX_FF_SMC=1 APEX_NVRTC_DEFINES=SCAN_MAP_CHANNELS=1 $X" 'profile,B=8'
  for r in 1 2; do
    for n in 8 4 2 1; do
      bench_row "smc$n r$r" $X 'profile,B=3,B=8' APEX_FF_SMC=$n APEX_NVRTC_DEFINES=SCAN_MAP_CHANNELS=$n
      bench_row "smc$n pf r$r" $X 'profile,B=3,B=8,256x256' APEX_FF_SMC=$n APEX_NVRTC_DEFINES=SCAN_MAP_CHANNELS=$n APEX_FF_PACK_FREE=1
    done
  done
  SHAPE=B=8 prof b8_smc2 26 APEX_NONE=1 | tee -a $OUT/kernels.txt
  SHAPE=profile prof b1_smc2_pf 10 APEX_FF_PACK_FREE=1 | tee -a $OUT/kernels.txt
}
prof() {  # $1 label, $2 launches a call, then env; $SHAPE; binary $X (default ff_x30)
  local label=$1 n=$2; shift 2
  env "$@" timeout 120 ncu --csv --cache-control none --clock-control none --launch-skip $((20 * n)) --launch-count $n \
    --metrics gpu__time_duration.sum ${X:-$B/ff_x30} --bench-only --only "$SHAPE" --refine auto > $OUT/ncu_$label.csv 2>&1
  echo "== $label"; kernel_table $OUT/ncu_$label.csv
}

# ff_x30c: ff_x30b with SCAN_MAP_CHANNELS 4, plus APEX_FF_WG8_SMEM / APEX_FF_WG16_SMEM=bytes: the
# t = 8 / t = 16 wgmma refine launched with that much dynamic shared memory (past 114 KiB: one
# CTA a SM instead of two).
call4() {  # one wgmma CTA a SM against two
  X=$B/ff_x30c
  for r in 1 2; do
    bench_row "c base r$r" $X 'profile,B=3,B=8' APEX_NONE=1
    bench_row "c wg8-1/SM r$r" $X 'profile,B=3,B=8' APEX_FF_WG8_SMEM=120000
    bench_row "c wg16-1/SM r$r" $X 'profile,B=3,B=8' APEX_FF_WG16_SMEM=120000
    bench_row "c both-1/SM r$r" $X 'profile,B=3,B=8' APEX_FF_WG8_SMEM=120000 APEX_FF_WG16_SMEM=120000
    bench_row "c runs8 wg8-1/SM r$r" $X 'B=8' APEX_FF_WG8_SMEM=120000 APEX_FF_RUN_FRAMES=8
  done
  SHAPE=B=8 prof b8_c_wg8 26 APEX_FF_WG8_SMEM=120000 | tee -a $OUT/kernels.txt
}

# ff_x30d: ff_x30c plus APEX_FF_BASE_BLOCKS=n: ff_base in n blocks (default: a block per 16 bands,
# B=8: 64).
call5() {  # with the t = 8 refine one CTA a SM: the base pass's blocks, run lengths
  X=$B/ff_x30d
  for r in 1 2; do
    bench_row "d wg8-1/SM r$r" $X 'profile,B=3,B=8' APEX_FF_WG8_SMEM=120000
    for n in 32 48 96 132; do  # B=8 only: the default is 8 blocks at B=1, 64 at B=8
      bench_row "d wg8-1/SM base$n r$r" $X 'B=8' APEX_FF_WG8_SMEM=120000 APEX_FF_BASE_BLOCKS=$n
    done
    for f in 2 4; do bench_row "d wg8-1/SM runs$f r$r" $X 'B=8' APEX_FF_WG8_SMEM=120000 APEX_FF_RUN_FRAMES=$f; done
  done
}

# The landed code (ff_s30; .device/ab/s30.so for apex-host, built with it): the map scan at four
# channels a block, the t = 8 wgmma refine one CTA a SM (program::wg_smem), no experiment
# switch. ff_final / final.so: the twenty-ninth session's landed build (4da06f8; main d5cc208
# differs from it only in the reordered t = 8 wgmma PTX).
call6() {  # self-checks; in process and apex-host against s29's build; the acceptance run
  SHAPES='profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'
  check_auto s30 200 $B/ff_s30 "$SHAPES"
  for r in 1 2; do
    bench_row "s29 r$r" $B/ff_final 'profile,B=3,B=8,256x256,tiles 32/16' APEX_NONE=1
    bench_row "s30 r$r" $B/ff_s30 'profile,B=3,B=8,256x256,tiles 32/16' APEX_NONE=1
  done
  for r in 1 2; do host_ab s29_r$r final; host_ab s30_r$r s30; done
  ab_table
  acceptance
  cat $OUT/table.txt
}

call8() {  # why two t = 8 wgmma CTAs on a SM take 2.5x one: Nsight Compute, B=8 in one run (256 CTAs)
  for m in 2 1; do
    local e=APEX_NONE=1; [ $m = 1 ] && e=APEX_FF_WG8_SMEM=120000
    env $e APEX_FF_RUN_FRAMES=8 timeout 150 ncu --kernel-name regex:ff_refine_wg_c128_t8 --launch-skip 20 --launch-count 1 \
      --cache-control none --clock-control none --section SpeedOfLight --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      --metrics regex:smsp__pcsamp_warps_issue_stalled_.*,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum \
      $B/ff_x30c --bench-only --only B=8 --refine auto > $OUT/ncu_t8_${m}_a_sm.log 2>&1
    echo "== t8, $m a SM"
    grep -E "Duration|Registers Per|Shared Memory Config|Dynamic Shared|Achieved Occ|Theoretical Occ|Warp Cycles Per Issued|No Eligible|Issued Warp|L1/TEX Hit|L2 Hit|Memory Throughput|DRAM Throughput|sector_hit_rate|inst_executed.sum" $OUT/ncu_t8_${m}_a_sm.log | head -24
    grep -E "pcsamp_warps_issue_stalled" $OUT/ncu_t8_${m}_a_sm.log | grep -v not_issued | sort -k3 -n -r | head -8
  done
}

"$@"
