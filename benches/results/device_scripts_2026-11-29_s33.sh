#!/usr/bin/env bash
# Thirty-third session (2026-11-29): the thirty-second session's prepared experiments, run.
# Usage on the device machine: bash benches/results/device_scripts_2026-11-29_s33.sh callN
# Binaries in .device/bin (ff_model_gpu_check builds):
#   ff_s32m main's kernels (af68eb2's; the later commits changed no kernel or launch)
#   ff_x32n main plus three experiment patches of the thirty-second session, each switched by
#           the environment (nothing changes without it):
#           ff_model_wg_upper_bounds_experiment_s32.patch  APEX_NVRTC_DEFINES stand-ins
#             WG_X_NOLOADS (no global load of the tile), WG_X_NODW (the depthwise's centre tap
#             alone), WG_X_NOSTORES (the finish stores almost nothing); outputs wrong, rc 1
#           ff_model_placement_experiment_s32.patch  APEX_FF_X_CARVEOUT, _CLUSTER1, _POLICY
#           ff_model_base_split_experiment_s32.patch APEX_FF_X_BASE_SPLIT
#   ff_s33a the wgmma refine's finish staged in shared memory, then 16-byte stores (wg_store);
#           an L0 tile that ff_select split stores its f32 result only (L1 overwrites its heavy)
#   ff_s33b main's finish (two pixels a thread from the accumulators), the split tile's heavy
#           left out as in ff_s33a
#   ff_s33c ff_s33b plus l0map tile-major where both levels are pack-free (device/fast.rs:
#           l0map_tile); the gpu_check's new shape "B=4 tiles 32/16"
#   ff_s33d ff_s33b plus the same in the lean and fused refines (every storage): a split L0
#           tile's kernel stores its f32 result only. The landed build (plugin: .device/ab/s33.so;
#           main's: .device/ab/main33.so)
#   ff_x33e ff_s33d plus L2 eviction hints by APEX_NVRTC_DEFINES (outputs right):
#           FF_X_SCAN_LAST (the map scans' loads evict-last: the refine reads the same tiles
#           next), WG_X_LOADS_CS (the wgmma refine's loads evict-first: their last use),
#           WG_X_L0MAP_LAST (L0's f32 result stored evict-last: L1 reads it next)
#   ff_x34  main (940a869) plus ff_model_next_experiments_s33.patch: prepared, not run this session
#           (next1 below): WG_X_CONTIG_T, FF_X_BASE_FULL, WG_X_L0MAP_LAST, APEX_FF_X_L0MAP_SETS,
#           APEX_FF_X_LAST_PRIO with APEX_GRAPH_NODE_PRIO
#   ff_s33e main at 75f9311 (gpu_check --seed); plugin .device/ab/s33e.so (next2)
#   ff_x33  ff_s33a plus timing-only stand-ins by APEX_NVRTC_DEFINES (outputs wrong, rc 1):
#           WG_X_NOCOPY (every value staged, nothing written out), WG_X_CONTIG (the same bytes,
#           each CTA's written contiguous inside its frame's planes)
# next1 / next2 need ff_x34, ff_s33e, .device/ab/s33e.so and .device/host/release/apex-host; where
# .device is gone, rebuild them: ff_s33e and s33e.so from 75f9311 (or later: the kernels are the
# same through e83711c), ff_x34 from 940a869 with ff_model_next_experiments_s33.patch applied
# (CARGO_TARGET_DIR=.device/slim cargo build --release -p apex-plugin-ff-model --example
# ff_model_gpu_check; CARGO_TARGET_DIR=.device/host cargo build --release -p apex-host -p
# apex-plugin-ff-model).
source benches/results/device_lib.sh

# One in-process bench of ff_x32n, p50 per case, as a row of $OUT/sweep.txt: $1 label, $2 extra
# gpu_check flags ("" or "--stage refines"), then env assignments.
xrow() {
  local label=$1 extra=$2; shift 2
  timeout 60 env "$@" $B/ff_x32n --bench-only --only 'profile,B=8' --precision fp16 --refine auto $extra > /tmp/x.log 2>&1
  echo "$label rc=$? $(grep -E '^(profile|B=8) ' /tmp/x.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
}

call1() {  # stand-ins (frame and refines alone), placement switches, base split; two rounds each
  echo "# stand-ins: the whole frame, then the refine blocks alone (--stage refines)" | tee -a $OUT/sweep.txt
  for r in 1 2; do
    for d in none WG_X_NOLOADS WG_X_NODW WG_X_NOSTORES "WG_X_NOLOADS WG_X_NODW WG_X_NOSTORES"; do
      e=(APEX_NVRTC_DEFINES="$d"); [ "$d" = none ] && e=(X=1)
      xrow "${d// /+} frame r$r" "" "${e[@]}"
      xrow "${d// /+} refines r$r" "--stage refines" "${e[@]}"
    done
  done
  echo "# placement" | tee -a $OUT/sweep.txt
  for r in 1 2; do
    for s in X=1 APEX_FF_X_CARVEOUT=100 APEX_FF_X_CARVEOUT=72 APEX_FF_X_CLUSTER1=0 APEX_FF_X_POLICY=default; do
      xrow "$s r$r" "" $s
    done
  done
  echo "# base split" | tee -a $OUT/sweep.txt
  for r in 1 2; do
    for s in X=1 APEX_FF_X_BASE_SPLIT=4 APEX_FF_X_BASE_SPLIT=4,64,64 APEX_FF_X_BASE_SPLIT=3,48,96 APEX_FF_X_BASE_SPLIT=0,,128; do
      xrow "$s r$r" "" $s
    done
  done
}

timeline() {  # $1 label, $2 binary, $3 shape: one traced call's launches and the SMs' residency
  APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=300" $B/$2 --bench-only --only "$3" --precision fp16 > /tmp/tl.log 2>&1
  echo "== timeline $1 $3 rc=$?" | tee -a $OUT/sweep.txt
  grep -E '^(profile|B=[0-9]+) ' /tmp/tl.log | tee -a $OUT/sweep.txt
  python3 benches/probes/ff_timeline.py /tmp/tl.log | tee -a $OUT/sweep.txt
}

call2() {  # ff_s33a: fp16 self-check, main and it alternating (frame, refines alone), its timeline
  step ff_check_s33a 240 $B/ff_s33a --only 'profile,B=3,B=8,B=16,B=4 256x256,B=4 K=64/160,tiles 32/16,256x256,nothing selected,no split' --precision fp16 --refine auto
  step ff_check_s33a_wg 120 $B/ff_s33a --only 'profile,B=8' --precision fp16 --refine wg
  cat $OUT/ff_check_s33a.log $OUT/ff_check_s33a_wg.log > $OUT/checks.txt
  echo "s33a ok: $(grep -cE '^ok' $OUT/checks.txt) FAIL: $(grep -cE '^FAIL' $OUT/checks.txt)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/checks.txt | head -20 | tee -a $OUT/sweep.txt
  bench_ab 3 'profile,B=8,B=16' ff_s32m:auto ff_s33a:auto | tee -a $OUT/sweep.txt
  stage_ab 2 ff_s32m ff_s33a
  timeline s33a ff_s33a B=8
}

call3() {  # ff_s33b's self-check; main, ff_s33a, ff_s33b alternating; ff_x33's stand-ins
  step ff_check_s33b 200 $B/ff_s33b --only 'profile,B=3,B=8,B=16,B=4 256x256,tiles 32/16,256x256,no split' --precision fp16 --refine auto
  echo "s33b ok: $(grep -cE '^ok' $OUT/ff_check_s33b.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_s33b.log)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/ff_check_s33b.log | head -20 | tee -a $OUT/sweep.txt
  bench_ab 3 'profile,B=8' ff_s32m:auto ff_s33a:auto ff_s33b:auto | tee -a $OUT/sweep.txt
  stage_ab 2 ff_s32m ff_s33a ff_s33b
  for r in 1 2; do
    for d in none WG_X_NOCOPY WG_X_CONTIG; do
      e=(APEX_NVRTC_DEFINES="$d"); [ "$d" = none ] && e=(X=1)
      for extra in "" "--stage refines"; do
        timeout 60 env "${e[@]}" $B/ff_x33 --bench-only --only 'profile,B=8' --precision fp16 --refine auto $extra > /tmp/x.log 2>&1
        echo "x33 $d ${extra:-frame} r$r rc=$? $(grep -E '^(profile|B=8) ' /tmp/x.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
      done
    done
  done
}

call4() {  # ff_s33c: fp16 self-check; main, ff_s33b, ff_s33c alternating; refines alone; timeline
  step ff_check_s33c 240 $B/ff_s33c --only 'profile,B=3,B=8,B=16,B=4 256x256,B=4 K=64/160,B=4 tiles 32/16,tiles 32/16,256x256,no split' --precision fp16 --refine auto
  step ff_check_s33c_wg 120 $B/ff_s33c --only 'B=8,B=4 256x256' --precision fp16 --refine wg
  cat $OUT/ff_check_s33c.log $OUT/ff_check_s33c_wg.log > $OUT/checks.txt
  echo "s33c ok: $(grep -cE '^ok' $OUT/checks.txt) FAIL: $(grep -cE '^FAIL' $OUT/checks.txt)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/checks.txt | head -20 | tee -a $OUT/sweep.txt
  bench_ab 3 'profile,B=8,B=16' ff_s32m:auto ff_s33b:auto ff_s33c:auto | tee -a $OUT/sweep.txt
  stage_ab 2 ff_s32m ff_s33b ff_s33c
  timeline s33c ff_s33c B=8
}

call5() {  # the landing build: self-checks of the changed kernels in every storage, then apex-host's
  # ff_model suite, main and it alternating, two rounds
  step ff_check_s33d 240 $B/ff_s33d --only 'profile,B=8,tiles 32/16,B=4 tiles 32/16,C=16 36x60 tiles 6/3,K=64/160,B=4 K=64/160,nothing selected' --refine auto
  step ff_check_s33d_paths 150 $B/ff_s33d --only 'profile,B=8' --refine fused,lean,split
  cat $OUT/ff_check_s33d.log $OUT/ff_check_s33d_paths.log > $OUT/checks.txt
  echo "s33d ok: $(grep -cE '^ok' $OUT/checks.txt) FAIL: $(grep -cE '^FAIL' $OUT/checks.txt)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/checks.txt | head -20 | tee -a $OUT/sweep.txt
  for r in 1 2; do host_ab main33_r$r main33; host_ab s33_r$r s33; done
  ab_table | tee -a $OUT/sweep.txt
}

call6() {  # ff_x33e: L2 eviction hints on the pack-free levels' tile reads and l0map, two rounds
  for r in 1 2; do
    for d in none FF_X_SCAN_LAST WG_X_LOADS_CS WG_X_L0MAP_LAST "FF_X_SCAN_LAST WG_X_LOADS_CS WG_X_L0MAP_LAST"; do
      e=(APEX_NVRTC_DEFINES="$d"); [ "$d" = none ] && e=(X=1)
      timeout 60 env "${e[@]}" $B/ff_x33e --bench-only --only 'profile,B=8,B=16' --precision fp16 --refine auto > /tmp/x.log 2>&1
      echo "x33e ${d// /+} r$r rc=$? $(grep -E '^(profile|B=8|B=16) ' /tmp/x.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
    done
  done
}

# One in-process bench of build $1 on shapes $2 (fp16, auto) as a row of $OUT/sweep.txt: $3
# label, $4 extra flags ("" or "--stage refines"), then env assignments.
vrow() {
  local bin=$1 shapes=$2 label=$3 extra=$4; shift 4
  timeout 60 env "$@" $B/$bin --bench-only --only "$shapes" --precision fp16 --refine auto $extra > /tmp/x.log 2>&1
  echo "$label ${extra:-frame} rc=$? $(grep -E '^(profile|B=[0-9]+) ' /tmp/x.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
}

next1() {  # prepared for the next session (ff_x34): which level's store layout costs, the base
  # pass in whole lines, WG_X_L0MAP_LAST with l0map rotated with the sets, and the last run's
  # launches at a greater scheduling priority; two rounds
  for r in 1 2; do
    for v in "none" "WG_X_CONTIG_T=16" "WG_X_CONTIG_T=8" "FF_X_BASE_FULL" "WG_X_L0MAP_LAST" \
             "WG_X_L0MAP_LAST|APEX_FF_X_L0MAP_SETS=1" "none|APEX_FF_X_L0MAP_SETS=1" \
             "none|APEX_GRAPH_NODE_PRIO=1" "none|APEX_GRAPH_NODE_PRIO=1 APEX_FF_X_LAST_PRIO=all:-1" \
             "none|APEX_GRAPH_NODE_PRIO=1 APEX_FF_X_LAST_PRIO=l1:-1"; do
      # A variant: defines (or none), then after | environment assignments.
      d=${v%%|*}; e=(X=1); [ "$d" = none ] || e=(APEX_NVRTC_DEFINES="$d")
      [ "$v" = "${v#*|}" ] || e+=(${v#*|})
      vrow ff_x34 'profile,B=8,B=16' "x34 $v r$r" "" "${e[@]}"
      vrow ff_x34 'profile,B=8,B=16' "x34 $v r$r" "--stage refines" "${e[@]}"
    done
  done
}

next2() {  # prepared for the next session: does apex-host read the profile ~3.7 us slower than the
  # in-process bench because it times other inputs (seed 123, its default, against the bench's
  # 21: a frame's selection and so where its tiles lie follow the inputs)? In process at five
  # seeds, then apex-host at seeds 123 and 21; two rounds
  for r in 1 2; do
    for seed in 21 123 5 7 1000; do
      vrow ff_s33e 'profile,B=8' "s33e seed $seed r$r" "--seed $seed" X=1
    done
  done
  cp .device/ab/s33e.so .device/host/release/libapex_plugin_ff_model.so
  for r in 1 2; do
    for seed in 123 21; do
      step host_seed${seed}_r$r 150 $HOST run --no-build --backends cuda --filter 'ff_model.*' --seed $seed --output-dir /tmp/seed_$seed
      python3 - /tmp/seed_$seed/summary.json "host seed $seed r$r" <<'PY2' | tee -a $OUT/sweep.txt
import json, sys
s = json.load(open(sys.argv[1]))
rows = []
for k, c in sorted(s['benchmarks'].items()):
    if '/fp16/' in k and 'path=fast' in k and 'height=128' in k and 'tile_size_l0=16' in k:
        rows.append('B=%s %.2f' % (k.split('batch=')[1].split(',')[0], c.get('p50_ms', float('nan')) * 1e3))
print(sys.argv[2], ' '.join(rows))
PY2
    done
  done
}

"$@"
