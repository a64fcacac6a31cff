#!/usr/bin/env bash
# The regression gate's acceptance checks on this machine (the figures in the issue-6 note):
#   1. A/A: the quick CPU suite N+1 times, each gated against baselines/cpu.json, and each
#      consecutive pair compared with `apex-host compare` (noise-aware verdicts on raw samples).
#   2. The slowdown fixture: one baseline run, then N runs at APEX_FIXTURE_SLOWDOWN=1.25 (regress
#      expected) and N at 1.0 (pass expected), each compared with the baseline run.
# Usage: benches/gate/aa_check.sh [N]   (needs `cargo build --release -p apex-host` first)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-5}
B=./target/release/apex-host
out=target/gate-check
rm -rf "$out"
export RAYON_NUM_THREADS=1 CI=1

verdicts() { # compare_summary.json -> "rule_fail=X regress=Y"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['counts']; print('rule_fail=%d regress=%d improve=%d inconclusive=%d' % (c['failed'], c['verdict_regress'], c['verdict_improve'], c['verdict_inconclusive']))" "$1"
}

echo "== A/A: $((N + 1)) quick CPU runs gated against baselines/cpu.json"
for i in $(seq 0 "$N"); do
  set +e
  $B run --backends cpu --quick --save-samples --output-dir "$out/aa$i" --compare baselines/cpu.json >/dev/null 2>&1
  echo "run $i: exit $?"
  set -e
done
for i in $(seq 1 "$N"); do
  $B compare "$out/aa$i/summary.json" "$out/aa$((i - 1))/summary.json" --output-dir "$out/pair$i" >/dev/null 2>&1 || true
  echo "pair $((i - 1))->$i: $(verdicts "$out/pair$i/compare_summary.json")"
done

echo "== slowdown fixture (fixtures.slow): +25 % and A/A against one baseline run"
slow() { APEX_FIXTURE_SLOWDOWN=$1 $B run --backends cpu --quick --save-samples --fixtures --filter fixtures.slow --output-dir "$2" >/dev/null 2>&1; }
slow 1 "$out/slow-base"
for i in $(seq 1 "$N"); do
  for s in 1.25 1; do
    slow "$s" "$out/slow-$s-$i"
    $B compare "$out/slow-$s-$i/summary.json" "$out/slow-base/summary.json" --output-dir "$out/slow-cmp-$s-$i" >/dev/null 2>&1 || true
    echo "slowdown $s run $i: $(verdicts "$out/slow-cmp-$s-$i/compare_summary.json")"
  done
done
