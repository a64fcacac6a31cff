#!/usr/bin/env bash
# Forty-third session's GPU call: the CUDA programs of tile_ops, nn_ops, tile_ssm and ff_model
# now start with plugin-api's storage header (apex_plugin_api::cuda::STORAGE_CUH) instead of four
# copies of it. Their PTX is byte-identical to main's before the change (732 programs compiled
# by NVRTC 13.0 here, sm_90 / sm_90a and ff_model's sm_80); this call runs and verifies every CUDA
# case on the GPU and gates it against the committed baseline. Run from the repository root on
# the device machine (two H200s: nvidia-h200-x2, `--devices all`, as .github/workflows/
# perf_gpu.yml runs the suite): `bash benches/results/device_scripts_2026-11-30_s43.sh call1`,
# output under $OUT.
# Binaries: .device/g43/release: apex-host and the plugins' libraries (no fixtures), release
# builds of the working tree.
set -u
H="env CARGO_TARGET_DIR=.device/g43 .device/g43/release/apex-host"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpus.txt"
source <(sed -n '/^suite()/,/^}/p' benches/results/device_scripts_2026-11-30_s42.sh)

call1() {  # every CUDA case of the quick suite, verified, gated by the file --compare auto picks
  suite run1 auto
  grep -E "compare auto|baseline" "$OUT/run1.log" | head -3 | tee -a "$OUT/table.txt"
}

"$@"
