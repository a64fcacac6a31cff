#!/usr/bin/env bash
# The device calls of the second session of 2026-11-25 (H100), run from the repository root on the
# device machine with the release binaries carried in .device/slim (apex-host, the plugin
# libraries, the examples). Usage on the device: `source benches/results/device_scripts_2026-11-25_s2.sh; callN`.
# Call 1 (issue 15): the poisson self-check (both CG launch plans), the bench sweep of the CG
# launch plans, Nsight Compute on the 256^3 per-kernel path, and the poisson CUDA suite.
set -u
B=.device/slim/release
export CARGO_TARGET_DIR=.device/slim PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
row() { printf '%-12s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
cases() { # summary.json -> one line per case: id, status, p50 us, mode/cache, GB/s, % copy, figures
  python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s.get('time_accounting') or {}
print('status', s['status'], s['counts'], 'wall', round(t.get('wall_s', 0), 1), 'sampling %', round(t.get('sampling_pct', 0), 1))
print('phases', {k: round(v, 1) for k, v in (t.get('phases_s') or {}).items()})
for k, c in sorted(s['benchmarks'].items()):
    tp = c.get('throughput') or {}
    h = c.get('headline'); m = (c.get('timing') or {}).get(h or '', {})
    p50 = c.get('p50_ms')
    figs = ' '.join('%s=%.4g' % (n, f.get('median', f.get('value', 0)) if isinstance(f, dict) else 0) for n, f in (c.get('figures') or {}).items())
    print('%-110s %-15s %10s %s/%s %7s %6s %s %s' % (k[:110], c['status'], '%.2f' % (p50 * 1e3) if p50 else '-', h, m.get('cache', '-'),
          '%.0f' % tp['gbps'] if tp.get('gbps') else '-', '%.1f' % tp['pct_of_copy_bandwidth'] if tp.get('pct_of_copy_bandwidth') else '-', figs, (c.get('reason') or '')[:120]))
PY
}
call1() {
  step pois_check 400 $B/examples/poisson_gpu_check --bench
  grep -E "^checks:|^RESULT|^FAIL|^bench|^device" "$OUT/pois_check.log" | cut -c1-200
  step pois_ncu 200 ncu --kernel-name regex:'cg_direction|cg_update' --launch-skip 40 --launch-count 4 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    $B/examples/poisson_gpu_check --only '256^3 seed cap [launches]'
  grep -E "cg_direction|cg_update|Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Registers Per|Mem Busy|Max Bandwidth" "$OUT/pois_ncu.log" | head -60
  step pois_run 400 $B/apex-host run --no-build --backends cuda --filter 'poisson.*' --output-dir "$OUT/pois"
  cases "$OUT/pois/summary.json" > "$OUT/pois_cases.txt"; cut -c1-260 "$OUT/pois_cases.txt"
  (cd "$OUT/pois" && tar czf ../pois_report.tgz summary.json summary.md) && rm -rf "$OUT/pois"
}
call2() { # cg_persistent v2 (L2 loads, per-block partials, unrolled update): self-check and the sweep
  step pois_check2 400 $B/examples/poisson_gpu_check --bench
  grep -E "^checks:|^RESULT|^FAIL|^bench" "$OUT/pois_check2.log" | grep -E "checks|RESULT|FAIL|cg |copy" | cut -c1-190
}
call3() { # cg_persistent v3 (Chronopoulos-Gear single reduction: one pass and one barrier per iteration)
  step pois_check3 400 $B/examples/poisson_gpu_check --bench
  grep -E "^checks:|^RESULT|^FAIL|^bench" "$OUT/pois_check3.log" | grep -E "checks|RESULT|FAIL|cg |copy" | cut -c1-190
}
call4() { # cg_persistent with L1-cached loads vs L2-only; cg_direction at 8 and 16 planes per thread
  step pois_check4 400 $B/examples/poisson_gpu_check --bench
  grep -E "^checks:|^RESULT|^FAIL|^bench" "$OUT/pois_check4.log" | grep -E "checks|RESULT|FAIL|cg |copy" | cut -c1-190
}
call5() { # the final poisson tree: self-check + bench, then the poisson CUDA suite through apex-host
  step pois_check5 400 $B/examples/poisson_gpu_check --bench
  grep -E "^checks:|^RESULT|^FAIL|^bench" "$OUT/pois_check5.log" | grep -E "checks|RESULT|FAIL|cg |copy" | cut -c1-190
  step pois_run5 400 $B/apex-host run --no-build --backends cuda --filter 'poisson.*' --output-dir "$OUT/pois"
  cases "$OUT/pois/summary.json" > "$OUT/pois_cases5.txt"; cut -c1-230 "$OUT/pois_cases5.txt"
  (cd "$OUT/pois" && tar czf ../pois_report5.tgz summary.json summary.md) && rm -rf "$OUT/pois"
}
call6() { # nn_ops: erfc fit + MUFU activations, streaming forward+gradient cross-entropy, one-wave
          # LayerNorm; poisson: cg_direction's grid capped at what is resident (cheaper empty launches)
  step nn_check6 450 $B/examples/nn_ops_gpu_check --bench
  grep -E "^checks:|^RESULT|^FAIL|^bench|%copy" "$OUT/nn_check6.log" | head -20
  awk '/^op /,0' "$OUT/nn_check6.log" | cut -c1-120
  step pois_cg6 120 $B/apex-host run --no-build --backends cuda --filter 'poisson.cg/cuda/*' --output-dir "$OUT/pois"
  cases "$OUT/pois/summary.json" | cut -c1-200; rm -rf "$OUT/pois"
}
call7a() { # nn_ops self-check after the split streaming forward+gradient plan and the paired bf16/fp16 packs
  step nn_check7 450 $B/examples/nn_ops_gpu_check
  grep -E "^checks:|^RESULT|^FAIL" "$OUT/nn_check7.log" | head -20
}
call7b() { # side by side in one call: our DRAM-cold batch bench, then torch eager and torch.compile on the same cases
  step nn_bench7 300 $B/examples/nn_ops_gpu_check --bench-only
  awk '/^op /,0' "$OUT/nn_bench7.log" | grep -v "^op" | cut -c1-120
  grep -E "copy line" "$OUT/nn_bench7.log"
  step nn_torch7 280 python3 benches/anchors/nn_ops_torch.py
  python3 - "$OUT/nn_ops_torch.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    p = r.get('params') or {}
    print('%-14s %-18s %-5s %-40s %9s %s' % (r.get('impl'), r.get('kernel'), r.get('precision'),
          ','.join('%s=%s' % kv for kv in sorted(p.items()))[:40], '%.2f' % r['us_per_call'] if r.get('us_per_call') else '-', r.get('cache', '')))
PY
}
call8() { # Nsight Compute on the nn_ops cases still behind torch.compile (LayerNorm bf16 1024 / 8192, CE+grad 262k)
  for t in "layer_norm bf16 batch=1 seq=8192 dim=1024" "layer_norm bf16 batch=1 seq=8192 dim=8192" "cross_entropy+grad bf16 rows=4096 vocab=262144"; do
    n=$(echo "$t" | tr ' =' '__' | cut -c1-40)
    ncu --kernel-name regex:'layer_norm|cross_entropy' --launch-skip 6 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
      $B/examples/nn_ops_gpu_check --bench-only --only "$t" > "$OUT/ncu_$n.log" 2>&1
    echo "== $t"; grep -E "Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit Reg|Waves Per SM|Grid Size|L2 Hit|L1/TEX Hit|Stall|Warp Cycles Per Issued" "$OUT/ncu_$n.log" | head -24
  done
}
call9() { # LayerNorm and CE+grad with launch bounds for 1536 / 2048 resident threads per SM (register caps 42 / 32)
  step nn_bench9 420 $B/examples/nn_ops_gpu_check --bench-only
  grep -E "^(layer_norm|cross_entropy\+grad|ce\+grad)" "$OUT/nn_bench9.log" | cut -c1-110
}
call10() { # LayerNorm at 2 and 1 vectors per thread beside the default 4; then the torch anchors, one call
  step nn_bench10 400 $B/examples/nn_ops_gpu_check --bench-only
  grep -E "^(layer_norm|copy)" "$OUT/nn_bench10.log" | cut -c1-110; grep -c PASS "$OUT/nn_bench10.log"
  step nn_torch10 200 python3 benches/anchors/nn_ops_torch.py
  grep -E "layer_norm" "$OUT/nn_ops_torch.jsonl" | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(r['impl'], r['precision'], r['params'].get('dim'), r['params'].get('seq'), r.get('us_per_call'), r.get('cache'))"
}
call11() { # cross-entropy forward+gradient: the streaming loops unrolled 8 deep against 4
  step nn_bench11 200 $B/examples/nn_ops_gpu_check --bench-only --only "+grad"
  grep -E "grad" "$OUT/nn_bench11.log" | cut -c1-110
}
call12() { # issue 16 on the GPU machine: engine backends in discover, the engine cases (CPU and trt), the TensorRT skip
  python3 -c "import onnxruntime as o; print('onnxruntime', o.__version__, o.get_available_providers())" 2>&1 | tail -1
  ORT_DYLIB_PATH=$(python3 -c "import glob,os,onnxruntime as o; print(sorted(glob.glob(os.path.join(os.path.dirname(o.__file__),'capi','libonnxruntime.so.1*')))[-1])" 2>/dev/null)
  export ORT_DYLIB_PATH; echo "ORT_DYLIB_PATH=$ORT_DYLIB_PATH"
  $B/apex-host discover --no-build --verbose > "$OUT/discover.log" 2>&1; sed -n '/ngine backends/,/^$/p' "$OUT/discover.log" | head -20
  step eng_run 200 $B/apex-host run --no-build --filter 'trt_engine.*' --output-dir "$OUT/eng"
  cases "$OUT/eng/summary.json" | cut -c1-250
  : > /tmp/apex_x.engine
  step eng_trt 120 $B/apex-host run --no-build --filter 'trt_engine.engine/*' --backends trt --trt-engine-path /tmp/apex_x.engine \
    --trt-input-shape input=1x3x128x128 --output-dir "$OUT/trt"
  cases "$OUT/trt/summary.json" | cut -c1-300
  (cd "$OUT" && tar czf engines_reports.tgz eng/summary.json eng/summary.md trt/summary.json trt/summary.md) && rm -rf "$OUT/eng" "$OUT/trt"
}
call13() { # poisson after the shared 7-point march (march_tiles) of cg_direction and cg_persistent: self-check and bench
  step pois_check13 300 $B/examples/poisson_gpu_check --bench
  grep -E "^checks:|^RESULT|^FAIL" "$OUT/pois_check13.log"
  grep -E "^bench (copy|cg 64\^3 to|cg 16|cg 256\^3 seed cap  )" "$OUT/pois_check13.log" | cut -c1-170
}
call14() { # issue 13 anchor on the GPU machine: export the FF profile case (plugin CPU path), then the PyTorch module
           # from the spec: parity (fp64 vs the f64 reference, fp32 vs the fast CPU path, fp16 on the GPU) and
           # eager / torch.compile / reduce-overhead frames per second, fp16, one call
  step ff_export 200 $B/examples/ff_model_export --out "$OUT/ff_export"
  tail -5 "$OUT/ff_export.log"
  step ff_torch 360 python3 benches/anchors/ff_model_torch.py "$OUT/ff_export"
  tail -30 "$OUT/ff_torch.log" | cut -c1-220
  rm -rf "$OUT/ff_export"
}
call15() { # poisson after device.rs became device/{plan,solver,enqueue}.rs and cg_persistent's solve skips the slot memset
  step pois_check15 300 $B/examples/poisson_gpu_check --bench
  grep -E "^checks:|^RESULT|^FAIL" "$OUT/pois_check15.log"
  grep -E "^bench (copy|cg 64\^3 to 1e-5  |cg 64\^3 to 1e-5 \[launches\]|cg 256\^3 seed cap  )" "$OUT/pois_check15.log" | cut -c1-170
}
