#!/usr/bin/env bash
# The device calls of the fifth session of 2026-11-25 (H100), run from the repository root on the
# device machine with the release binaries carried in .device/slim. Usage on the device:
# `source benches/results/device_scripts_2026-11-25_s5.sh; callN`. The helpers (`step`, `cases`,
# `phases`, B, CARGO_TARGET_DIR) come from the earlier sessions' scripts.
source benches/results/device_scripts_2026-11-25_s4.sh
# Call 1 (issue 13): the ff_model CUDA fast path: the GPU self-check (every shape x storage, fresh
# inputs, poisoned outputs, rotation), the ff_model CUDA suite through apex-host, and, when both
# pass, the PyTorch anchor on the exported profile in the same call.
call1() {
  step ff_check 300 $B/examples/ff_model_gpu_check
  grep -E "^(ok|FAIL|RESULT)|seed|poison|rotate" "$OUT/ff_check.log" | cut -c1-200 | head -80
  step ff_run 300 $B/apex-host run --no-build --backends cuda --filter 'ff_model.*' --output-dir "$OUT/ff"
  cases "$OUT/ff/summary.json" > "$OUT/ff_cases.txt"; cut -c1-300 "$OUT/ff_cases.txt"
  (cd "$OUT/ff" && tar czf ../ff_report.tgz summary.json summary.md) && rm -rf "$OUT/ff"
  if grep -q "RESULT: OK" "$OUT/ff_check.log"; then
    step ff_export 200 $B/examples/ff_model_export --out "$OUT/ff_export"
    step ff_torch 360 python3 benches/anchors/ff_model_torch.py "$OUT/ff_export"
    grep -E "eager|compile|reduce|parity|frames" "$OUT/ff_torch.log" | head -20
    rm -rf "$OUT/ff_export"
  fi
  cat "$OUT/table.txt"
}
# Call 2 (issue 13): f32 packed tiles and L0 result between the levels, split (hi + lo) GEMM
# operands, latency fixes (tokens in shared memory, a warp per channel in pack, unrolled loads);
# the self-check, Nsight Compute's duration of each of the ten kernels of one fp16 profile frame,
# the ff_model CUDA suite, and the PyTorch anchor when the check passes.
call2() {
  step ff_check2 300 $B/examples/ff_model_gpu_check
  grep -E "^(ok|FAIL|RESULT)|seed 11|poison" "$OUT/ff_check2.log" | cut -c1-160 | head -80
  step ff_ncu2 200 ncu --kernel-name regex:ff_ --launch-count 10 --metrics gpu__time_duration.sum \
    $B/examples/ff_model_gpu_check --only profile
  grep -E "ff_[a-z_]+|gpu__time_duration" "$OUT/ff_ncu2.log" | sed 's/(int, .*//' | paste - - | awk '{print $1, $(NF)}' | head -12
  call1_run_and_anchor 2
}
call1_run_and_anchor() { # $1: suffix
  step ff_run$1 300 $B/apex-host run --no-build --backends cuda --filter 'ff_model.*' --output-dir "$OUT/ff$1"
  cases "$OUT/ff$1/summary.json" > "$OUT/ff_cases$1.txt"; cut -c1-300 "$OUT/ff_cases$1.txt"
  (cd "$OUT/ff$1" && tar czf ../ff_report$1.tgz summary.json summary.md) && rm -rf "$OUT/ff$1"
  if grep -q "RESULT: OK" "$OUT/ff_check$1.log"; then
    step ff_export$1 200 $B/examples/ff_model_export --out "$OUT/ff_export"
    step ff_torch$1 360 python3 benches/anchors/ff_model_torch.py "$OUT/ff_export"
    grep -E "eager|compile|reduce|parity|frames" "$OUT/ff_torch$1.log" | head -20
    rm -rf "$OUT/ff_export"
  fi
  cat "$OUT/table.txt"
}
# Call 3 (issue 13): ff_refine writes the pre-norm tensor once (no recomputed GEMM) and ff_apply
# finishes elementwise; the modulated rows staged 32 channels at a time (tiles 32/16 stay under
# 48 KiB). Self-check, Nsight Compute durations at the GPU's own clocks with warm caches (one fp16
# profile frame, after one untimed frame), the suite, and the anchor when the check passes.
call3() {
  step ff_check3 300 $B/examples/ff_model_gpu_check
  grep -E "^(ok|FAIL|RESULT)|seed 11|    [a-z]+:" "$OUT/ff_check3.log" | cut -c1-160 | head -80
  step ff_ncu3 200 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 10 --launch-count 10 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    $B/examples/ff_model_gpu_check --only profile
  grep -E "^  ff_|gpu__time_duration|registers_per|warps_active" "$OUT/ff_ncu3.log" | sed 's/(int, [^)]*)//; s/ (.*)x(.*)x(.*), Context.*//' | paste - - - - | awk '{print $1, $4, $7, $10}'
  call1_run_and_anchor 3
}
# Call 4 (issue 13): FiLM's linears as warp-per-row GEMVs (float4 rows, 8 rows in flight), float4
# staging of the modulated rows, fp16 weights without a lo part, ff_apply 4 elements a thread, the
# C < 32 staging fix. Same steps as call 3.
call4() {
  step ff_check4 300 $B/examples/ff_model_gpu_check
  grep -E "^(ok|FAIL|RESULT)|seed 11|    [a-z]+:" "$OUT/ff_check4.log" | cut -c1-160 | head -80
  step ff_ncu4 200 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 10 --launch-count 10 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    $B/examples/ff_model_gpu_check --only profile
  grep -E "^  ff_|gpu__time_duration|registers_per|warps_active" "$OUT/ff_ncu4.log" | sed 's/(int, [^)]*)//' | awk '/^  ff_/{n=$1; next} {printf "%s %s %s\n", n, $1, $NF}' | paste - - - | awk '{print $1, $6, $3, $9}'
  call1_run_and_anchor 4
}
# Call 5 (issue 13): branch-free staging (clamped unconditional loads, STAGE in flight) in pack,
# FiLM (tokens and the GEMV rows), the refine staging and depthwise, and ff_apply (its loads
# issued before the GroupNorm statistics). Self-check, Nsight Compute durations, the suite (no
# anchor: call 4 ran it with this tree's fast path at 129 us).
call5() {
  step ff_check5 300 $B/examples/ff_model_gpu_check
  grep -E "^(ok|FAIL|RESULT)|seed 11" "$OUT/ff_check5.log" | cut -c1-160 | head -80
  step ff_ncu5 200 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 10 --launch-count 10 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    $B/examples/ff_model_gpu_check --only profile
  grep -E "^  ff_|gpu__time_duration|registers_per|warps_active" "$OUT/ff_ncu5.log" | sed 's/(int, [^)]*)//' | awk '/^  ff_/{n=$1; next} {printf "%s %s %s\n", n, $1, $NF}' | paste - - - | awk '{print $1, $6, $3, $9}'
  step ff_run5 300 $B/apex-host run --no-build --backends cuda --filter 'ff_model.*' --output-dir "$OUT/ff5"
  cases "$OUT/ff5/summary.json" > "$OUT/ff_cases5.txt"; cut -c1-250 "$OUT/ff_cases5.txt"
  (cd "$OUT/ff5" && tar czf ../ff_report5.tgz summary.json summary.md) && rm -rf "$OUT/ff5"
}
# Call 6 (issue 13): the eager path (one launch per op, the host's selection copied in) in the
# self-check and the suite; Nsight Compute's warp-state and source counters of one ff_film.
call6() {
  step ff_check6 300 $B/examples/ff_model_gpu_check
  grep -E "^(ok|FAIL|RESULT)|seed 11" "$OUT/ff_check6.log" | cut -c1-160 | head -90
  step ff_ncu6 200 ncu --clock-control none --cache-control none --kernel-name ff_film --launch-skip 2 --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis \
    $B/examples/ff_model_gpu_check --only profile
  grep -E "Duration|Warp Cycles|Stall|stall|Hit Rate|Mem Busy|L1/TEX|Branch|Uncoalesced|smsp__pcsamp" "$OUT/ff_ncu6.log" | head -40
  step ff_run6 300 $B/apex-host run --no-build --backends cuda --filter 'ff_model.*' --output-dir "$OUT/ff6"
  cases "$OUT/ff6/summary.json" > "$OUT/ff_cases6.txt"; cut -c1-250 "$OUT/ff_cases6.txt"
  python3 -c "
import json; s=json.load(open('$OUT/ff6/summary.json'))
for k,c in s['benchmarks'].items():
    b=(c.get('timing') or {}).get('batch') or {}
    print(k[-40:], 'graph', b.get('graph'), 'fallback', (c.get('protocol') or {}).get('graph_fallback_reason') or b.get('graph_fallback_reason'))
"
  (cd "$OUT/ff6" && tar czf ../ff_report6.tgz summary.json summary.md) && rm -rf "$OUT/ff6"
}
# Call 7 (issue 13): FiLM's GEMVs a thread per output row (float4 rows, 16 loads in flight), the
# refine depthwise a channel per thread (weights loaded once), index divisions by reciprocal
# multiplication; the eager path refuses graph capture. Self-check, durations, the suite and
# the anchor in the same call.
call7() {
  step ff_check7 300 $B/examples/ff_model_gpu_check
  grep -E "^(FAIL|RESULT)" "$OUT/ff_check7.log" | head -20
  step ff_ncu7 200 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 10 --launch-count 10 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    $B/examples/ff_model_gpu_check --only profile
  grep -E "^  ff_|gpu__time_duration|registers_per|warps_active" "$OUT/ff_ncu7.log" | sed 's/(int, [^)]*)//' | awk '/^  ff_/{n=$1; next} {printf "%s %s %s\n", n, $1, $NF}' | paste - - - | awk '{print $1, $6, $3, $9}'
  call1_run_and_anchor 7
}
# Call 8 (issue 13): FiLM blocks of 1024 threads (GEMV rows split across 2-32 threads). Self-check,
# durations, then the acceptance run: the PyTorch anchor first (its jsonl), then the ff_model CUDA
# suite with --anchor-results (anchor / ours side by side in the report) and --format apex-x-gpu
# (the seeds' end_to_end_infer rows), all in this call.
call8() {
  step ff_check8 300 $B/examples/ff_model_gpu_check
  grep -E "^(FAIL|RESULT)" "$OUT/ff_check8.log" | head -20
  step ff_ncu8 200 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 10 --launch-count 10 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    $B/examples/ff_model_gpu_check --only profile
  grep -E "^  ff_|gpu__time_duration|registers_per|warps_active" "$OUT/ff_ncu8.log" | sed 's/(int, [^)]*)//' | awk '/^  ff_/{n=$1; next} {printf "%s %s %s\n", n, $1, $NF}' | paste - - - | awk '{print $1, $6, $3, $9}'
  step ff_export8 200 $B/examples/ff_model_export --out "$OUT/ff_export"
  mkdir -p "$OUT/anchor"; step ff_torch8 360 env OUT="$OUT/anchor" python3 benches/anchors/ff_model_torch.py "$OUT/ff_export"
  grep -E "^#" "$OUT/ff_torch8.log" | head -12
  step ff_run8 300 $B/apex-host run --no-build --backends cuda --filter 'ff_model.*' --output-dir "$OUT/ff8" \
    --anchor-results "$OUT/anchor/ff_model_torch.jsonl" --format apex-x-gpu
  cases "$OUT/ff8/summary.json" > "$OUT/ff_cases8.txt"; cut -c1-250 "$OUT/ff_cases8.txt"
  grep -iE "anchor|torch" "$OUT/ff8/summary.md" | head -20
  python3 -c "
import json; g=json.load(open('$OUT/ff8/perf_gpu.json')); e=g['benchmarks'].get('end_to_end_infer') or {}
print(json.dumps(e)[:900])"
  cp "$OUT/ff8/summary.json" "$OUT/ff_summary8.json"; cp "$OUT/ff8/perf_gpu.json" "$OUT/ff_perf_gpu8.json"; cp "$OUT/ff8/summary.md" "$OUT/ff_summary8.md"
  rm -rf "$OUT/ff8" "$OUT/ff_export"
}
# Call 9 (issue 13): where ff_film's time goes: Nsight Compute's source view (SASS with warp-stall
# samples) of one L0 FiLM block set, the ten per-kernel durations of a B=3 frame (scaling), on
# the committed FiLM (256 threads, a thread per GEMV row; call 8's 1024-thread split was slower).
call9() {
  step ff_ncu9 200 ncu --clock-control none --cache-control none --kernel-name ff_film --launch-skip 2 --launch-count 1 \
    --set full --import-source no --page source --print-source sass --csv $B/examples/ff_model_gpu_check --only profile
  python3 - "$OUT/ff_ncu9.log" <<'PY' | tee "$OUT/ff_film_stalls9.txt"
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head = rows[0]; body = rows[1:]
def col(name):
    for i, h in enumerate(head):
        if h == name: return i
    return None
src = col('Source'); samp = col('Warp Stall Sampling (All Samples)') or col('Warp Stall Sampling (All Cycles)')
print('columns:', [h for h in head][:12])
if samp is None: sys.exit(0)
tot = sum(float(r[samp] or 0) for r in body)
print('total samples', tot)
for r in sorted(body, key=lambda r: -float(r[samp] or 0))[:25]:
    print('%6.1f%%  %s' % (100 * float(r[samp] or 0) / max(tot, 1), r[src][:110]))
PY
  step ff_ncu9b 200 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 10 --launch-count 10 \
    --metrics gpu__time_duration.sum $B/examples/ff_model_gpu_check --only B=3
  grep -E "^  ff_|gpu__time_duration" "$OUT/ff_ncu9b.log" | sed 's/(int, [^)]*)//' | awk '/^  ff_/{n=$1; next} {print n, $NF}'
}
# Call 10 (issue 13): FiLM in two launches (ff_film_hidden: scan, LayerNorm and a 32-row slice of
# the first linear per block; ff_film_out: a 64-row slice of the second), so no block reads more
# than a slice of the weights. The acceptance run of call 8, on this tree.
call10() {
  step ff_check10 300 $B/examples/ff_model_gpu_check
  grep -E "^(FAIL|RESULT)" "$OUT/ff_check10.log" | head -20
  step ff_ncu10 200 ncu --clock-control none --cache-control none --kernel-name regex:ff_ --launch-skip 12 --launch-count 12 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    $B/examples/ff_model_gpu_check --only profile
  grep -E "^  ff_|gpu__time_duration|registers_per|warps_active" "$OUT/ff_ncu10.log" | sed 's/(int, [^)]*)//' | awk '/^  ff_/{n=$1; next} {printf "%s %s %s\n", n, $1, $NF}' | paste - - - | awk '{print $1, $6, $3, $9}'
  step ff_export10 200 $B/examples/ff_model_export --out "$OUT/ff_export"
  mkdir -p "$OUT/anchor"; step ff_torch10 360 env OUT="$OUT/anchor" python3 benches/anchors/ff_model_torch.py "$OUT/ff_export"
  grep -E "^#" "$OUT/ff_torch10.log" | head -12
  step ff_run10 300 $B/apex-host run --no-build --backends cuda --filter 'ff_model.*' --output-dir "$OUT/ff10" \
    --anchor-results "$OUT/anchor/ff_model_torch.jsonl" --format apex-x-gpu
  cases "$OUT/ff10/summary.json" > "$OUT/ff_cases10.txt"; cut -c1-250 "$OUT/ff_cases10.txt"
  grep -iE "anchor|torch" "$OUT/ff10/summary.md" | head -20
  python3 -c "
import json; g=json.load(open('$OUT/ff10/perf_gpu.json')); e=g['benchmarks'].get('end_to_end_infer') or {}
print(json.dumps(e)[:900])"
  cp "$OUT/ff10/summary.json" "$OUT/ff_summary10.json"; cp "$OUT/ff10/perf_gpu.json" "$OUT/ff_perf_gpu10.json"; cp "$OUT/ff10/summary.md" "$OUT/ff_summary10.md"
  rm -rf "$OUT/ff10" "$OUT/ff_export"
}
# Call 11 (issue 13): the self-check with the eager path also on tiles 32/16 and a 256x256 map.
call11() {
  step ff_check11 300 $B/examples/ff_model_gpu_check
  grep -E "^(ok|FAIL|RESULT)" "$OUT/ff_check11.log" | head -40
}
# Call 12 (issue 13): the PyTorch module in fp16 against the plugin's CUDA fp16 output directly:
# `ff_model_export --cuda` writes the fast path's fp16 outputs on the export's seed, and the
# anchor compares each torch variant with them (and with the f64 reference).
call12() {
  step ff_export12 200 $B/examples/ff_model_export --out "$OUT/ff_export" --cuda
  cat "$OUT/ff_export12.log"
  step ff_torch12 360 env FF_ITERS=50 python3 benches/anchors/ff_model_torch.py "$OUT/ff_export"
  grep -E "^#" "$OUT/ff_torch12.log" | grep -E "fp16" | head -24
  rm -rf "$OUT/ff_export"
}
