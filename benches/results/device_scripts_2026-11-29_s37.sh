#!/usr/bin/env bash
# Device calls of the thirty-seventh session (2026-11-29; H200, the only kind lent). Call 1 was
# the thirty-sixth session's next1 (device_scripts_2026-11-29_s36.sh, binaries from its
# build_next). Binaries (built here):
#   .device/bin/ff_s37, .device/ab/s37.so, .device/host_s37/apex-host: d4f8e52, every refine's
#                         heavy and detail stores evict-first (call 1's FF_X_CS_ALL, landed)
#   .device/bin/ff_model_export: the export example at d4f8e52 (the acceptance run)
#   .device/bin/ff_x37e, .device/ab/x37e.so: d4f8e52 plus ff_model_l0map_sets_experiment_s37.patch:
#                         APEX_FF_X_L0MAP_SETS=1 gives every buffer set its own l0map (rotated
#                         with the set, as the DRAM-cold batch rotates inputs and outputs);
#                         APEX_NVRTC_DEFINES=FF_X_L0MAP_EL stores the wgmma L0 refine's l0map
#                         evict-last (L1 reads it next); APEX_FF_X_RUN_FRAMES=N runs of N frames
#   .device/bin/ff_x37f, .device/ab/x37f.so: 4012310 plus ff_model_base_blocks_prio_experiment_s37.patch:
#                         APEX_FF_X_BASE_BPB=N ff_base's bands a block (BASE_BANDS_PER_BLOCK, 16:
#                         at B=8 64 blocks); APEX_FF_X_FILM_TILES=1 or 2, the FiLM linears' tiles a
#                         block (sizing::film_tiles: 2 where runs overlap); APEX_FF_X_L1_PRIO=P every
#                         run's L1 launches at scheduling priority P, kept by the bench's graph under
#                         APEX_GRAPH_NODE_PRIO=1 (instantiated with USE_NODE_PRIORITY)
#   .device/bin/ff_x37g, .device/ab/x37g.so: 9619dc7 plus ff_model_scan_map_loads_experiment_s37.patch:
#                         APEX_NVRTC_DEFINES=SCAN_MAP_TB16=N, the pack-free map scan's tiles in flight
#                         a warp at t = 16 (8: at K = 20 a warp's 10 tiles take two rounds of loads)
# Log: benches/results/ff_model_l0map_sets_h200_2026-11-29_s37.txt (every call's rows).
source benches/results/device_lib.sh
source <(sed -n '/^vrow()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
source <(sed -n '/^host_p50s()/,/^}/p' benches/results/device_scripts_2026-11-29_s35.sh)
source <(sed -n '/^PROFILE_CASES=/p;/^host_with()/,/^}/p;/^self_check()/,/^}/p' \
  benches/results/device_scripts_2026-11-29_s36.sh)

call2() {  # the landed build's self-checks (every storage, auto) and apex-host suite; then the
  # per-set l0map, its evict-last stores and the run length, in process (two rounds) and in
  # apex-host (two rounds)
  self_check check_s37 "s37 auto" X=1 $B/ff_s37 --only 'profile,tiles 32/16,256x256,B=8' --refine auto
  host_with s37 .device/host_s37
  host_ab s37 s37
  cp /tmp/ab_s37/summary.json $OUT/ff_model_suite_s37.json
  local el=APEX_NVRTC_DEFINES=FF_X_L0MAP_EL sets=APEX_FF_X_L0MAP_SETS=1
  self_check check_el "sets + el" $sets $el $B/ff_x37e --only 'profile,B=8,B=16,tiles 32/16,256x256,B=3' --precision fp16 --refine auto
  for r in 1 2; do
    vrow ff_x37e 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x37e 'profile,B=8,B=16' "sets r$r" "" $sets
    vrow ff_x37e 'profile,B=8,B=16' "sets el r$r" "" $sets $el
    vrow ff_x37e 'profile,B=8,B=16' "el r$r" "" $el
    for n in 2 4 8; do vrow ff_x37e 'B=8,B=16' "runs of $n r$r" "" APEX_FF_X_RUN_FRAMES=$n; done
  done
  host_with x37e .device/host_s37
  for r in 1 2; do
    for v in X=1 $sets "$sets $el"; do
      step host_x 200 env $v $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hx
      host_p50s /tmp/hx/summary.json "apex-host $v r$r"
    done
  done
  cat $OUT/ab.txt
}

call3() {  # issue 13's acceptance run on the landed build: export, the PyTorch anchor, apex-host
  host_with s37 .device/host_s37
  acceptance
}

call4() {  # the landed build's timelines (FF_TIMELINE, one traced call each, the bench's
  # order): the profile and B=8; the traces' FTL lines kept under $OUT
  source <(sed -n '/^timeline()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
  timeline profile ff_s37 profile X=1; cp /tmp/tl.log $OUT/tl_profile.log
  timeline b8 ff_s37 B=8 X=1; cp /tmp/tl.log $OUT/tl_b8.log
}

call5() {  # the base pass's grid and the FiLM linears' tiles a block (call 4's timeline: 64 base
  # blocks live 43-46 us and hold 36-40 SMs that take no t = 16 refine CTA while the L0 refines
  # wait): in process two rounds, the timeline of the best, apex-host two rounds
  for r in 1 2; do
    vrow ff_x37f 'profile,B=8,B=16' "main r$r" "" X=1
    for n in 4 8 32 64; do vrow ff_x37f 'profile,B=8,B=16' "base bpb $n r$r" "" APEX_FF_X_BASE_BPB=$n; done
    vrow ff_x37f 'profile,B=8,B=16' "film tiles 1 r$r" "" APEX_FF_X_FILM_TILES=1
    vrow ff_x37f 'profile,B=8,B=16' "node prio r$r" "" APEX_GRAPH_NODE_PRIO=1
    vrow ff_x37f 'profile,B=8,B=16' "l1 prio r$r" "" APEX_GRAPH_NODE_PRIO=1 APEX_FF_X_L1_PRIO=-1
  done
  source <(sed -n '/^timeline()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
  timeline bpb32 ff_x37f B=8 APEX_FF_X_BASE_BPB=32
  timeline bpb4 ff_x37f B=8 APEX_FF_X_BASE_BPB=4
  timeline l1prio ff_x37f B=8 APEX_GRAPH_NODE_PRIO=1 APEX_FF_X_L1_PRIO=-1
  host_with x37f .device/host_s37
  for r in 1 2; do
    for v in X=1 APEX_FF_X_BASE_BPB=32 APEX_FF_X_BASE_BPB=4 APEX_FF_X_FILM_TILES=1; do
      step host_x 200 env $v $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hx
      host_p50s /tmp/hx/summary.json "apex-host $v r$r"
    done
  done
}

call6() {  # the map scan's loads in one round at t = 16 (call 4's timeline: B=8's L0 map scan
  # CTAs live 9.1-10.6 us, B=1's pack and scan 2.7): self-check, in process and apex-host, two rounds
  local tb='APEX_NVRTC_DEFINES=SCAN_MAP_TB16=12'
  self_check check_tb "tb16 12" $tb $B/ff_x37g --only 'B=8,B=16,B=4 256x256,B=4 tiles 32/16' --precision fp16 --refine auto
  for r in 1 2; do
    vrow ff_x37g 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x37g 'profile,B=8,B=16' "tb16 10 r$r" "" APEX_NVRTC_DEFINES=SCAN_MAP_TB16=10
    vrow ff_x37g 'profile,B=8,B=16' "tb16 12 r$r" "" $tb
  done
  host_with x37g .device/host_s37
  for r in 1 2; do
    for v in X=1 $tb; do
      step host_x 200 env $v $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hx
      host_p50s /tmp/hx/summary.json "apex-host $v r$r"
    done
  done
}

next1() {  # prepared for the next session: the base pass in the call's tail (its rows ran as call 1 of
  # device_scripts_2026-11-29_s38.sh, trimmed: B=8 +8 to +29 us). Binaries from
  # build_next: .device/bin/ff_x38a and .device/ab/x38a.so (f7a2747 plus
  # ff_model_base_in_tail_experiment_s37.patch; its header names the switches). Self-checks, then
  # the bench (two rounds), two timelines, apex-host (two rounds). ~5 min.
  local co=APEX_FF_X_CARVEOUT_BASE=100 v2='APEX_NVRTC_DEFINES=FF_X_BASE_VECS=2 FF_X_BASE_MINB=2'
  self_check check_tail "tail, carveout, vecs 2" APEX_FF_X_BASE_SPLIT=0,,64 $co "$v2" $B/ff_x38a --only 'B=8,B=16,B=4 256x256,B=4 tiles 32/16,profile' --precision fp16,fp32 --refine auto
  self_check check_split "split 4" APEX_FF_X_BASE_SPLIT=4 $B/ff_x38a --only 'B=8' --precision fp16 --refine auto
  for r in 1 2; do
    vrow ff_x38a 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x38a 'profile,B=8,B=16' "tail 64 r$r" "" APEX_FF_X_BASE_SPLIT=0,,64
    vrow ff_x38a 'profile,B=8,B=16' "tail 64 co r$r" "" APEX_FF_X_BASE_SPLIT=0,,64 $co
    vrow ff_x38a 'profile,B=8,B=16' "tail 64 co v2 r$r" "" APEX_FF_X_BASE_SPLIT=0,,64 $co "$v2"
    vrow ff_x38a 'profile,B=8,B=16' "tail 128 co v2 r$r" "" APEX_FF_X_BASE_SPLIT=0,,128 $co "$v2"
    vrow ff_x38a 'profile,B=8,B=16' "tail 32 co v2 r$r" "" APEX_FF_X_BASE_SPLIT=0,,32 $co "$v2"
    vrow ff_x38a 'profile,B=8,B=16' "v2 r$r" "" "$v2"
  done
  source <(sed -n '/^timeline()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)
  timeline tail64co ff_x38a B=8 APEX_FF_X_BASE_SPLIT=0,,64 $co
  timeline tail64cov2 ff_x38a B=8 APEX_FF_X_BASE_SPLIT=0,,64 $co \
    'APEX_NVRTC_DEFINES=FF_TIMELINE FF_TIMELINE_CALL=300 FF_X_BASE_VECS=2 FF_X_BASE_MINB=2'
  host_with x38a .device/host_s37
  for r in 1 2; do
    for v in X=1 "APEX_FF_X_BASE_SPLIT=0,,64 $co" "APEX_FF_X_BASE_SPLIT=0,,64 $co $v2"; do
      step host_x 200 env $v $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hx
      host_p50s /tmp/hx/summary.json "apex-host $v r$r"
    done
  done
}

build_next() {  # on the build machine, not the device: next1's binaries from f7a2747 plus its patch
  # in a worktree of its own (then carry .device/bin/ff_x38a, .device/ab/x38a.so and
  # .device/host_s37/apex-host)
  build_patched f7a2747 benches/results/ff_model_base_in_tail_experiment_s37.patch x38a host_s37
}

"$@"
