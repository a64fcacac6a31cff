#!/usr/bin/env bash
# The device calls of the twenty-fourth session (2026-11-28), run from the repository root on the
# device machine with the release binaries carried in .device/bin and .device/ab. Usage on the
# device: `source benches/results/device_scripts_2026-11-28_s24.sh; call1`. Experiment builds are
# kept as patches beside this script.
source "$(dirname "${BASH_SOURCE[0]}")/device_lib.sh"
SHAPES='profile,tiles 32/16,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3,nothing selected,no split'

# Call 1 (issue 13): FiLM's linear blocks over several tiles. ff_fg = main (1fe9481) with
# ff_film_fc1 / ff_film_out taking `tiles` tile indices a block (each block's weight slice then
# serves tiles * frames vectors, at most 12) and its GEMV reading interleaved float4s
# (conflict-free shared loads); APEX_FF_FILM_TILES=n sets the tiles (default 1). ff_fin = main.
# Self-check of ff_fg (every fast shape, tiles 1; three shapes with tiles 4), the in-process sweep
# over tiles 1-4 against main (two rounds), then apex-host: main, tiles 1, tiles 3.
call1() {
  check_auto fg 220 $B/ff_fg "$SHAPES"
  APEX_FF_FILM_TILES=4 check_auto fg4 120 $B/ff_fg 'profile,B=3,B=8,K=64/160'
  for r in 1 2; do
    bench_row "ff_fin r$r" $B/ff_fin 'profile,B=8,B=16'
    for n in 1 2 3 4; do bench_row "ff_fg t$n r$r" $B/ff_fg 'profile,B=8,B=16' APEX_FF_FILM_TILES=$n; done
  done
  host_ab fin ff_fin; host_ab fg1 ff_fg; APEX_FF_FILM_TILES=3 host_ab fg3 ff_fg
  ab_table | tee $OUT/ab_table.txt
}

# Call 2 (issue 13): ff_fx2 = main with FiLM's linear blocks over two tile indices where the
# batch runs in several runs (ff_film_fc1_x2 / ff_film_out_x2; one run: ff_film_fc1 / ff_film_out,
# a tile a block as before), the GEMV's float4s interleaved. Self-check of ff_fx2 (the shapes
# whose FiLM changed: every one reads the interleaved GEMV, B=8 the x2 entry points), the
# in-process A/B against main (three rounds), then apex-host alternating (two rounds).
call2() {
  check_auto fx2 160 $B/ff_fx2 'profile,tiles 32/16,B=3,B=4,B=8,K=64/160,C=16 36x60 tiles 6/3'
  for r in 1 2 3; do for v in ff_fin ff_fx2; do bench_row "$v r$r" $B/$v 'profile,B=3,B=4,B=8,B=16'; done; done
  for r in 1 2; do host_ab fin$r ff_fin; host_ab fx2$r ff_fx2; done
  ab_table | tee $OUT/ab_table.txt
}

# Call 3 (issue 13): the base pass beside four lean CTAs a SM. ff_mr56 = ff_fx2 (21ef659) with
# the lean refine's fp16/fp32 entry points at most 56 registers (__maxnreg__; 32-40 bytes spill)
# instead of 64, so that four lean CTAs leave 8,192 registers of a SM free: one ff_base block of
# 128 threads (64 registers) then runs beside them instead of in a lean CTA's place; knobs
# APEX_FF_BASE_THREADS (ff_base's block, default 256) and APEX_FF_BASE_BANDS (bands a block,
# default 16); ff_model_lean56_base_coresident_experiment_s24.patch. Self-check, the in-process
# sweep (two rounds), then apex-host: ff_fx2 against two settings.
call3() {
  APEX_FF_BASE_THREADS=128 APEX_FF_BASE_BANDS=4 check_auto mr56 150 $B/ff_mr56 'profile,256x256,B=3,B=8,K=64/160'
  for r in 1 2; do
    bench_row "ff_fx2 r$r" $B/ff_fx2 'profile,256x256,B=8,B=16'
    bench_row "ff_mr56 T256/16 r$r" $B/ff_mr56 'profile,256x256,B=8,B=16'
    for n in 16 8 4 2; do bench_row "ff_mr56 T128/$n r$r" $B/ff_mr56 'profile,256x256,B=8,B=16' APEX_FF_BASE_THREADS=128 APEX_FF_BASE_BANDS=$n; done
  done
  host_ab fx2 ff_fx2
  APEX_FF_BASE_THREADS=128 APEX_FF_BASE_BANDS=8 host_ab mr8 ff_mr56
  APEX_FF_BASE_THREADS=128 APEX_FF_BASE_BANDS=4 host_ab mr4 ff_mr56
  ab_table | tee $OUT/ab_table.txt
}

# Call 4 (issue 13): the packs with several channels a warp. ff_pk = ff_fx2 (21ef659) with ff_pack
# taking `cpw` channels a warp (a block WARPS * cpw; an 8x8 tile's 16 quads take half a warp, so
# two channels share it), knobs APEX_FF_PACK_CPW0 / APEX_FF_PACK_CPW1 (L0 / L1, default 1: the
# landed grids); ff_model_pack_channels_experiment_s24.patch. Self-check with 2/2, the in-process
# sweep (label cpw0/cpw1, two rounds), apex-host: ff_fx2 against 1/2 and 2/2.
call4() {
  APEX_FF_PACK_CPW0=2 APEX_FF_PACK_CPW1=2 check_auto pk22 150 $B/ff_pk 'profile,256x256,B=3,B=8,K=64/160,C=16 36x60 tiles 6/3'
  for r in 1 2; do
    bench_row "ff_fx2 r$r" $B/ff_fx2 'profile,256x256,B=8,B=16'
    for v in 1/1 1/2 2/2 1/4 2/4 4/4; do
      bench_row "ff_pk $v r$r" $B/ff_pk 'profile,256x256,B=8,B=16' APEX_FF_PACK_CPW0=${v%/*} APEX_FF_PACK_CPW1=${v#*/}
    done
  done
  host_ab fx2 ff_fx2
  APEX_FF_PACK_CPW0=1 APEX_FF_PACK_CPW1=2 host_ab pk12 ff_pk
  APEX_FF_PACK_CPW0=2 APEX_FF_PACK_CPW1=2 host_ab pk22 ff_pk
  ab_table | tee $OUT/ab_table.txt
}

# Call 5 (issue 13), prepared and NOT run: the session's device time ran out before a machine could
# start for it. The acceptance run on the landed build (21ef659 and its records): the plugin's
# exported weights and inputs, the PyTorch anchor (parity, eager, torch.compile, reduce-overhead),
# then apex-host's ff_model CUDA suite with the anchor's rows, as the nineteenth session's call 8.
call5() { acceptance; }
