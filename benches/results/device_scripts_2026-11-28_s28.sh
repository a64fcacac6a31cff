#!/usr/bin/env bash
# Twenty-eighth session (2026-11-28): the refine block on warpgroup MMAs (ff_refine_wg_c128_t16,
# _t8: fp16, sm_90a; 64-pixel CTAs, the GEMM on wgmma, the finish from the accumulators).
# Usage on the device machine: bash benches/results/device_scripts_2026-11-28_s28.sh callN
# Binaries in .device/bin (ff_model_gpu_check builds): ff_review (main, b2c5acf); ff_wg1 .. ff_wg5,
# successive states of cuda/fast/refine_wg.cu (its header lists what each measured): wg1 the
# weights in shared memory by one bulk copy (98 KiB a CTA); wg2 wg1 with the operand's stores
# conflict-free and its pairs converted at once; wg3 the weights from registers (36 KiB a CTA);
# wg4 wg3 at 32 pixels a CTA, three a SM; wg5 wg3 with the residual's base values from shared
# memory and no exchange for one-CTA tiles (landed as 76c818a; rebuilt from it as ff_head for
# call 8); wg6 wg5 with the operand built by column quads on consecutive lanes (landed after
# call 8; .device/ab holds both as plugin builds for call 8's apex-host A/B). Call 6's acceptance run uses
# .device/host/release (apex-host and the plugin built from the landed code) and
# .device/bin/ff_model_export. Logs: ff_model_*_s28_call*.
source benches/results/device_lib.sh
SHAPES='profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'

call1() {  # correctness of wg (fp16), then in process: the frame and the refines alone, lean vs wg
  step check_wg 240 $B/ff_wg1 --only "$SHAPES" --refine wg --precision fp16
  grep -E '^(ok|FAIL)' $OUT/check_wg.log | head -40
  grep -iE 'error|panic' $OUT/check_wg.log | head -10
  for r in 1 2; do
    step bench_r$r 200 $B/ff_wg1 --bench-only --only 'profile,B=3,B=8,B=16' --refine lean,wg
    grep -E '^(profile|B=[0-9]+|scaling)' $OUT/bench_r$r.log
  done
  step bench_main 200 $B/ff_review --bench-only --only 'profile,B=8' --refine lean
  grep -E '^(profile|B=[0-9]+|scaling)' $OUT/bench_main.log
  step stage 200 $B/ff_wg1 --bench-only --only 'profile,B=8' --refine lean,wg --stage refines
  grep -E '^(profile|B=[0-9]+|scaling)' $OUT/stage.log
  cat $OUT/table.txt
}
call2() {  # Nsight Compute of one run's wg and lean refines at B=8 (line information on)
  export APEX_NVRTC_LINEINFO=1
  for k in wg_c128_t16 wg_c128_t8 apply_lean_c128_t16 apply_lean_c128_t8; do
    r=wg; case $k in apply*) r=lean;; esac
    step ncu_$k 200 ncu --kernel-name regex:ff_refine_$k --launch-skip 20 --launch-count 1 \
      --set full --import-source yes -o $OUT/$k $B/ff_wg1 --bench-only --only B=8 --refine $r
    ncu --import $OUT/$k.ncu-rep --page details > $OUT/ncu_$k.txt 2>&1
    grep -E "^  [a-z_]+|Duration|Grid Size|Cluster Size|Registers|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|No Eligible|Issued Warp|Executed Ipc A|Memory Throughput|L2 Hit|DRAM Throughput|Compute \(SM\)" $OUT/ncu_$k.txt | head -24
    ncu --import $OUT/$k.ncu-rep --page source --csv --print-source cuda > $OUT/src_$k.csv 2>&1
    rm -f $OUT/$k.ncu-rep
  done
  cat $OUT/table.txt
}
call3() {  # wg t16 at B=8: stall reasons (raw pc-sampling counters) and the top source lines
  export APEX_NVRTC_LINEINFO=1
  for k in wg_c128_t16 apply_lean_c128_t16; do
    r=wg; case $k in apply*) r=lean;; esac
    step ncu3_$k 200 ncu --kernel-name regex:ff_refine_$k --launch-skip 21 --launch-count 1 \
      --set full --import-source yes -o $OUT/$k $B/ff_wg1 --bench-only --only B=8 --refine $r
    ncu --import $OUT/$k.ncu-rep --page raw --csv > /tmp/raw.csv 2>&1
    python3 - /tmp/raw.csv > $OUT/stalls_$k.txt <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h, v = rows[0], rows[2] if len(rows) > 2 else rows[1]
out = []
for name, val in zip(h, v):
    if 'pcsamp_warps_issue_stalled' in name and not name.endswith('not_issued'):
        try: out.append((float(val.replace(',', '')), name))
        except ValueError: pass
tot = sum(x for x, _ in out) or 1
for x, n in sorted(out, reverse=True)[:14]: print(f'{100*x/tot:5.1f}%  {n}')
for name, val in zip(h, v):
    if name in ('gpu__time_duration.sum', 'sm__cycles_active.avg', 'smsp__inst_executed.sum', 'launch__grid_size'):
        print(name, val)
PY
    cat $OUT/stalls_$k.txt
    ncu --import $OUT/$k.ncu-rep --page source --csv --print-source cuda > /tmp/src.csv 2>&1
    # (a summariser of the source page ran here, removed since: the page had no per-line samples for NVRTC sources)
    head -45 $OUT/top_$k.txt
    rm -f $OUT/$k.ncu-rep
  done
}
call4() {  # wg2 (operand stores conflict-free, pairs converted at once): checks, then lean, wg1, wg2
  step check_wg2 240 $B/ff_wg2 --only "$SHAPES" --refine wg --precision fp16
  grep -E '^(ok|FAIL)' $OUT/check_wg2.log | head -40
  for r in 1 2; do
    for v in ff_wg1 ff_wg2; do
      step stage_${v}_r$r 100 $B/$v --bench-only --only 'profile,B=8' --refine lean,wg --stage refines
      grep -E '^(profile|B=[0-9]+) ' $OUT/stage_${v}_r$r.log
    done
  done
  step bench_wg2 200 $B/ff_wg2 --bench-only --only 'profile,B=8' --refine lean,wg
  grep -E '^(profile|B=[0-9]+|scaling)' $OUT/bench_wg2.log
  export APEX_NVRTC_LINEINFO=1
  step ncu4 200 ncu --kernel-name regex:ff_refine_wg_c128_t16 --launch-skip 21 --launch-count 1 \
      --set full --import-source yes -o $OUT/wg2 $B/ff_wg2 --bench-only --only B=8 --refine wg
  ncu --import $OUT/wg2.ncu-rep --page source --csv --print-source cuda > $OUT/src_wg2.csv 2>&1
  head -c 1500 $OUT/src_wg2.csv; echo; grep -c . $OUT/src_wg2.csv
  # (a summariser of the source page ran here, removed since: the page had no per-line samples for NVRTC sources)
  ncu --import $OUT/wg2.ncu-rep --page details | grep -E "Duration|Issued Ipc|No Eligible|Warp Cycles Per Issued|bank conflict" | head
  rm -f $OUT/wg2.ncu-rep
}
call5() {  # wg3 (weights from registers, 36 KiB a CTA) and wg4 (wg3 at 32 pixels a CTA, three a SM)
  for v in ff_wg3 ff_wg4; do
    step check_$v 240 $B/$v --only "$SHAPES" --refine wg --precision fp16
    echo "$v: ok $(grep -cE '^ok' $OUT/check_$v.log) FAIL $(grep -cE '^FAIL' $OUT/check_$v.log)"; grep -E '^FAIL' -A3 $OUT/check_$v.log | head -8
  done
  for r in 1 2; do
    for v in ff_wg2 ff_wg3 ff_wg4; do
      $B/$v --bench-only --only 'profile,B=8' --refine lean,wg --stage refines > /tmp/o.log 2>&1
      echo "stage $v r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $2, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
      $B/$v --bench-only --only 'profile,B=8' --refine lean,wg > /tmp/o.log 2>&1
      echo "frame $v r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $2, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    done
  done
  cp plugins/ff_model/src/cuda/fast/*.cu .
  export APEX_NVRTC_LINEINFO=1
  step ncu5 200 ncu --kernel-name regex:ff_refine_wg_c128_t16 --launch-skip 21 --launch-count 1 \
      --set full --import-source yes -o $OUT/wg3 $B/ff_wg3 --bench-only --only B=8 --refine wg
  ncu --import $OUT/wg3.ncu-rep --page source --csv --print-source cuda > $OUT/src_wg3.csv 2>&1
  head -c 800 $OUT/src_wg3.csv; echo
  # (a summariser of the source page ran here, removed since: the page had no per-line samples for NVRTC sources)
  ncu --import $OUT/wg3.ncu-rep --page details | grep -E "Duration|Issued Ipc|No Eligible|Warp Cycles Per Issued|Achieved Occ|bank conflict" | head
  rm -f $OUT/wg3.ncu-rep
}
call6() {  # wg5 (= the landed wg: wg3 with the base values from shared memory and no exchange
  # for one-CTA tiles; Refine::Auto runs it): checks, wg3 vs wg5 vs lean, then the acceptance run
  step check_wg5 240 $B/ff_wg5 --only "$SHAPES" --refine wg --precision fp16
  echo "wg5: ok $(grep -cE '^ok' $OUT/check_wg5.log) FAIL $(grep -cE '^FAIL' $OUT/check_wg5.log)"; grep -E '^FAIL' -A3 $OUT/check_wg5.log | head -8
  check_auto wg5 300 $B/ff_wg5 "$SHAPES"
  for r in 1 2; do
    for v in ff_wg3 ff_wg5; do
      $B/$v --bench-only --only 'profile,B=8' --refine lean,wg --stage refines > /tmp/o.log 2>&1
      echo "stage $v r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $2, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
      $B/$v --bench-only --only 'profile,B=8,B=16' --refine lean,wg > /tmp/o.log 2>&1
      echo "frame $v r$r: $(grep -E '^(profile|B=[0-9]+) ' /tmp/o.log | awk '{print $1, $2, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    done
  done
  acceptance
  grep -E "fp16|B=8|ff_model" $OUT/ff_summary.md | head -30
  cat $OUT/table.txt
}
call7() {  # every fast fp16 shape, lean against wg in process (the landed build), two rounds
  for r in 1 2; do
    $B/ff_wg5 --bench-only --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,no split' --refine lean,wg > /tmp/o.log 2>&1
    grep -E '^(profile|tiles|256x256|B=|K=|no split)' /tmp/o.log | awk -v r=$r '{print "r" r, $0}' | tee -a $OUT/shapes.txt
  done
}
call8() {  # ff_head (main 76c818a: the landed wg, its partial through whole_chunk_partial) and
  # ff_wg6 (its operand built by column quads on consecutive lanes: whole-segment loads, the
  # quad's edge columns by shuffles): checks, in-process A/B, then apex-host A/B (.device/ab)
  step check_head_wg 240 $B/ff_head --only "$SHAPES" --refine wg --precision fp16
  echo "head wg: ok $(grep -cE '^ok' $OUT/check_head_wg.log) FAIL $(grep -cE '^FAIL' $OUT/check_head_wg.log)"
  check_auto head 300 $B/ff_head "$SHAPES"
  step check_wg6 240 $B/ff_wg6 --only "$SHAPES" --refine wg --precision fp16
  echo "wg6: ok $(grep -cE '^ok' $OUT/check_wg6.log) FAIL $(grep -cE '^FAIL' $OUT/check_wg6.log)"; grep -E '^FAIL' -A3 $OUT/check_wg6.log | head -8
  for r in 1 2; do
    for v in ff_head ff_wg6; do
      $B/$v --bench-only --only 'profile,B=8' --refine lean,wg --stage refines > /tmp/o.log 2>&1
      echo "stage $v r$r: $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $2, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
      $B/$v --bench-only --only 'profile,B=8,tiles 32/16' --refine wg > /tmp/o.log 2>&1
      echo "frame $v r$r: $(grep -E '^(profile|B=8|tiles) ' /tmp/o.log | awk '{print $1, $2, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
    done
  done
  for r in 1 2; do host_ab head_r$r head; host_ab wg6_r$r wg6; done
  ab_table
  cat $OUT/table.txt
}
"$@"
