#!/usr/bin/env bash
# The device calls of the third session of 2026-11-25 (H100), run from the repository root on the
# device machine with the release binaries carried in .device/slim (apex-host and the plugin
# libraries). Usage on the device: `source benches/results/device_scripts_2026-11-25_s3.sh; callN`.
# The helpers (`step`, `cases`, B, CARGO_TARGET_DIR) come from the second session's script,
# whose own callN are replaced here.
source benches/results/device_scripts_2026-11-25_s2.sh
# Call 1 (issue 14, and issue 10 item 1): the whole nn_ops CUDA suite (both grids), as a user runs
# it, stopped by SIGTERM at 560 s if it has not finished (the run then reports the cases it
# finished, with the time accounting), to see whether it fits the 10 minutes the issue asks.
call1() {
  step nn_full 560 $B/apex-host run --no-build --backends cuda --filter 'nn_ops.*' --output-dir "$OUT/nn_full"
  cases "$OUT/nn_full/summary.json" > "$OUT/nn_full_cases.txt"; head -2 "$OUT/nn_full_cases.txt"
  python3 -c "
import json; s=json.load(open('$OUT/nn_full/summary.json')); print('counts', s['counts'])"
  (cd "$OUT/nn_full" && tar czf ../nn_full_report.tgz summary.json summary.md) && rm -rf "$OUT/nn_full"
}
