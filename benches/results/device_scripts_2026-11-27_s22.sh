#!/usr/bin/env bash
# The device calls of the twenty-second session (2026-11-27), run from the repository root on the
# device machine with the release binaries carried in .device/bin; its helpers are in
# device_lib.sh (moved there unchanged after the session's calls). Usage on the device:
# `source benches/results/device_scripts_2026-11-27_s22.sh; call1`. `ff_main` is main's
# ff_model_gpu_check at b5d1749; experiment builds are kept as patches beside this script.
source "$(dirname "${BASH_SOURCE[0]}")/device_lib.sh"

# Call 1 (issue 13): the lean refine's shape copies read their tiles where they lie (L0 the input
# map in the storage type, L1 l0map in f32) and the packs of those levels write only the token
# means (ff_inplace). Self-check of every fast shape under auto and three under every path, the
# in-process bench against main, the refines alone, and apex-host alternating, two rounds.
call1() {
  checks $B/ff_inplace auto
  bench_ab 2 'profile,B=8,B=16' ff_main:auto ff_inplace:auto
  stage_ab 1 ff_main ff_inplace
  for r in 1 2; do host_ab main_$r ff_main; host_ab inplace_$r ff_inplace; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 2 (issue 13): three lean-refine candidates against main. ff_xc: the chunks' partials pushed
# into every CTA of the cluster (st.async onto each CTA's mbarrier) instead of pulled by thread 0
# after a cluster barrier, so the lean kernel keeps one cluster barrier (arrived at on entry) and
# none before exit. ff_xcd: ff_xc, and the shape copies' depthwise a channel pair a thread, its
# hi and lo parts stored as 32-bit pairs. ff_l0ip: call 1's in-place reads for L0 only (L1 reads
# the pack's copy). Self-check (every fast shape under auto) of ff_xc and ff_xcd, the in-process
# bench, the refines alone, apex-host alternating.
call2() {
  step ff_check_xc 200 $B/ff_xc --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check_xcd 200 $B/ff_xcd --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  for v in xc xcd; do cat $OUT/ff_check_$v.log >> $OUT/checks.txt; echo "$v ok: $(grep -cE '^ok' $OUT/ff_check_$v.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_$v.log)"; rm $OUT/ff_check_$v.log; done
  awk '/^FAIL/{f=1} f' "$OUT/checks.txt" | head -20
  bench_ab 2 'profile,B=8,B=16' ff_main:auto ff_xc:auto ff_xcd:auto ff_l0ip:auto
  stage_ab 1 ff_main ff_xc ff_xcd
  for r in 1 2; do host_ab main_$r ff_main; host_ab xc_$r ff_xc; host_ab xcd_$r ff_xcd; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 3 (issue 13): ff_early against ff_xc (main at 32605e2): refine_operand loads the depthwise's
# weights with the staging's loads, not after its barrier (every refine kernel but the general
# lean one, whose 64 registers spill with it), and the fp16 lean shape copies load the GEMM's
# biases and first weight fragments after the staging's barrier, during the depthwise (GemmHead).
# Full self-check (the fused B=1 kernel changed too), in-process bench, refines alone, apex-host.
call3() {
  checks $B/ff_early auto
  bench_ab 2 'profile,B=8,B=16' ff_xc:auto ff_early:auto
  stage_ab 1 ff_xc ff_early
  for r in 1 2; do host_ab xc_$r ff_xc; host_ab early_$r ff_early; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 4 (issue 13): where B=8's time goes now, as wall time: ff_skip (main at 32605e2 with
# benches/results/ff_model_stage_skip_experiment_s22.patch: APEX_FF_SKIP leaves named launches out
# of the call; outputs wrong, timing only), in process, the profile and B=8, two rounds (the
# eighteenth session's table, call 1 of device_scripts_2026-11-27_s18.sh, again on today's build).
call4() {
  for r in 1 2; do
    for s in none base pack0,pack1 film0,film1 refine0 refine1 refine0,refine1 \
             pack0,pack1,film0,film1,refine0,refine1 base,pack0,pack1,film0,film1,refine0,refine1; do
      APEX_FF_SKIP=$s $B/ff_skip --bench-only --only 'profile,B=8' --refine auto > /tmp/o.log 2>&1
      echo "$s r$r rc=$? $(grep -E '^(profile|B=8) ' /tmp/o.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/skip.txt
    done
  done
}

# Call 5 (issue 13): ff_basepar against ff_xc (main at 32605e2): with several runs of frames every
# run on a side stream, so `ff_base` (alone on the host's stream) runs beside all of them instead
# of ahead of run 0's levels (benches/results/ff_model_base_beside_runs_experiment_s22.patch).
# A short self-check, the in-process bench, apex-host alternating, two rounds.
call5() {
  step ff_check_bp 120 $B/ff_basepar --only 'profile,B=3,B=8' --refine auto
  echo "basepar ok: $(grep -cE '^ok' $OUT/ff_check_bp.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_bp.log)"
  bench_ab 2 'profile,B=8,B=16' ff_xc:auto ff_basepar:auto
  for r in 1 2; do host_ab xc_$r ff_xc; host_ab basepar_$r ff_basepar; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 6 (issue 13, review mend): ff_xf, the fused refine (ff_refine_apply, which B=1 runs) on the
# same pushed exchange as the lean one (the pull helpers removed), against ff_xc (main at
# 8b7e0bb). Self-check of every fast shape under auto and three under the fused path, the
# in-process bench, apex-host alternating, one round each.
call6() {
  step ff_check_xf 200 $B/ff_xf --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split' --refine auto
  step ff_check_xf_fused 120 $B/ff_xf --only 'profile,B=8,tiles 32/16' --refine fused
  for v in xf xf_fused; do cat $OUT/ff_check_$v.log >> $OUT/checks.txt; echo "$v ok: $(grep -cE '^ok' $OUT/ff_check_$v.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_$v.log)"; rm $OUT/ff_check_$v.log; done
  awk '/^FAIL/{f=1} f' "$OUT/checks.txt" | head -20
  bench_ab 2 'profile,B=8,256x256' ff_xc:auto ff_xf:auto
  host_ab xc_1 ff_xc; host_ab xf_1 ff_xf
  ab_table | tee $OUT/ab_table.txt
}
