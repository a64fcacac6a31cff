#!/usr/bin/env bash
# The device calls of the twenty-sixth session (2026-11-28), run from the repository root on the
# device machine with the release binaries carried in .device/bin and .device/ab. Usage on the
# device: `source benches/results/device_scripts_2026-11-28_s26.sh; call1`.
source "$(dirname "${BASH_SOURCE[0]}")/device_lib.sh"
SHAPES='profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'

# The device copy's bench.yaml takes the B=8 case in every CUDA storage (the B=1 cases of those
# storages run in the same apex-host call).
b8_every_storage() {
  python3 - <<'PY'
import re
p = 'plugins/ff_model/bench.yaml'
s = open(p).read()
s = re.sub(r'(batch: 8\n(?:.*\n){4}  precisions: )\[fp16\]', r'\1[fp16, bf16, fp32]', s, count=1)
open(p, 'w').write(s)
PY
}

# Call 1 (issue 13, fp32): the refine's pointwise GEMM in 3xTF32 on tensor cores (ff_tf32, the
# working tree) against main (ff_main, b9dc2ad; scalar FMAs in fp32). Self-check of every fast
# shape in every storage under auto, fp32's three refine paths on three shapes; in process,
# fp32 and fp16 at the profile and B=8 on each fused path (ff_tf32), main's fp16 beside it; then
# apex-host alternating main and ff_tf32, two rounds, B=8 in every storage.
call1() {
  step ff_check_auto 300 $B/ff_tf32 --only "$SHAPES" --refine auto
  step ff_check_fp32_paths 150 $B/ff_tf32 --only 'profile,B=8,tiles 32/16' --refine fused,lean,split --precision fp32
  cat $OUT/ff_check_auto.log $OUT/ff_check_fp32_paths.log > $OUT/checks.txt
  rm -f $OUT/ff_check_auto.log $OUT/ff_check_fp32_paths.log
  echo "checks ok: $(grep -cE '^ok' $OUT/checks.txt) FAIL: $(grep -cE '^FAIL' $OUT/checks.txt)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/checks.txt | head -20
  for r in 1 2; do
    step bench_tf32_r$r 200 $B/ff_tf32 --bench-only --only profile,B=8 --refine auto,fused,lean --precision fp32,fp16
    grep -E '^(bench|profile|B=8|scaling)' $OUT/bench_tf32_r$r.log | tee -a $OUT/bench.txt
    step bench_main_r$r 100 $B/ff_main --bench-only --only profile,B=8 --refine auto
    grep -E '^(bench|profile|B=8|scaling)' $OUT/bench_main_r$r.log | sed 's/^/main /' | tee -a $OUT/bench.txt
    rm -f $OUT/bench_tf32_r$r.log $OUT/bench_main_r$r.log
  done
  b8_every_storage
  for r in 1 2; do host_ab main$r ff_main; host_ab tf32_$r ff_tf32; done
}

# Call 2 (issue 13, bf16): the lean shape copies' GEMM with both row tiles in one k loop
# (refine_gemm, as fp16 has run it since the twenty-first session) in bf16 too (ff_bw: bf16
# fits it in 80 registers without spilling; fp32 spills 16 bytes, so it keeps two loops), against
# the landed build (ff_tf32). bf16 self-check of every fast shape under auto and the lean path on
# three; in process bf16 at the profile and B=8, two rounds alternating; apex-host alternating,
# two rounds, B=8 in every storage.
call2() {
  step ff_check_bf16 200 $B/ff_bw --only "$SHAPES" --refine auto --precision bf16
  step ff_check_bf16_lean 100 $B/ff_bw --only 'profile,B=8,tiles 32/16' --refine lean --precision bf16
  cat $OUT/ff_check_bf16.log $OUT/ff_check_bf16_lean.log > $OUT/checks.txt
  rm -f $OUT/ff_check_bf16.log $OUT/ff_check_bf16_lean.log
  echo "checks ok: $(grep -cE '^ok' $OUT/checks.txt) FAIL: $(grep -cE '^FAIL' $OUT/checks.txt)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/checks.txt | head -20
  for r in 1 2; do for v in ff_tf32 ff_bw; do
    $B/$v --bench-only --only profile,B=8 --refine auto,lean --precision bf16 > /tmp/o.log 2>&1
    echo "-- $v r$r rc=$?" >> $OUT/bench.txt
    grep -E '^(profile|B=8|scaling)' /tmp/o.log | tee -a $OUT/bench.txt
  done; done
  b8_every_storage
  for r in 1 2; do host_ab tf32_$r ff_tf32; host_ab bw$r ff_bw; done
  rm -f $OUT/host_*.log
}

# Call 3 (issue 13, fp32 and bf16): both row tiles in one k loop in fp32's lean shape copies too,
# with one k step in flight in the lean kernel whatever the storage (ff_w32: fp32 then fits 80
# registers without spilling; bf16 drops from two steps to one), against the landed build (ff_bw).
# Self-check of every fast shape in fp32 and bf16 under auto and their lean paths on three; in
# process fp32 and bf16 at the profile and B=8 (auto and lean), two rounds alternating; apex-host
# alternating, two rounds, B=8 in every storage.
call3() {
  step ff_check 240 $B/ff_w32 --only "$SHAPES" --refine auto --precision fp32,bf16
  step ff_check_lean 120 $B/ff_w32 --only 'profile,B=8,tiles 32/16' --refine lean --precision fp32,bf16
  cat $OUT/ff_check.log $OUT/ff_check_lean.log > $OUT/checks.txt
  rm -f $OUT/ff_check.log $OUT/ff_check_lean.log
  echo "checks ok: $(grep -cE '^ok' $OUT/checks.txt) FAIL: $(grep -cE '^FAIL' $OUT/checks.txt)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/checks.txt | head -20
  for r in 1 2; do for v in ff_bw ff_w32; do
    $B/$v --bench-only --only profile,B=8 --refine auto,lean --precision fp32,bf16 > /tmp/o.log 2>&1
    echo "-- $v r$r rc=$?" >> $OUT/bench.txt
    grep -E '^(bench|profile|B=8|scaling)' /tmp/o.log | tee -a $OUT/bench.txt
  done; done
  b8_every_storage
  for r in 1 2; do host_ab bw$r ff_bw; host_ab w32_$r ff_w32; done
  rm -f $OUT/host_*.log
}

# Call 4 (issue 13): the landed state (ff_fin: call 3's fp32 copies with both row tiles in one k
# loop, bf16 back to two k steps in flight there, and Refine::Auto running the shape copies in
# every storage) against the previous landing (ff_bw). Self-check of every fast shape in every
# storage under auto; the acceptance run with ff_fin (export, the PyTorch anchor, apex-host with
# its rows); then apex-host alternating ff_bw and ff_fin, two rounds, B=8 in every storage.
call4() {
  step ff_check 300 $B/ff_fin --only "$SHAPES" --refine auto
  mv $OUT/ff_check.log $OUT/checks.txt
  echo "checks ok: $(grep -cE '^ok' $OUT/checks.txt) FAIL: $(grep -cE '^FAIL' $OUT/checks.txt)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/checks.txt | head -20
  cp .device/ab/ff_fin.so .device/host/release/libapex_plugin_ff_model.so
  acceptance
  b8_every_storage
  for r in 1 2; do host_ab bw$r ff_bw; host_ab fin$r ff_fin; done
  rm -f $OUT/host_*.log
}

# Call 5 (issue 13): the landed build's full self-check (ff_fin): every shape of the list, fast
# (fused and split; call 4 ran auto) and eager, in every storage; no --only, so B=4, B=16 and the
# five eager shapes run too.
call5() {
  step ff_check_full 420 $B/ff_fin --refine fused,split
  mv $OUT/ff_check_full.log $OUT/checks.txt
  echo "checks ok: $(grep -cE '^ok' $OUT/checks.txt) FAIL: $(grep -cE '^FAIL' $OUT/checks.txt)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $OUT/checks.txt | head -20; tail -2 $OUT/checks.txt
}
