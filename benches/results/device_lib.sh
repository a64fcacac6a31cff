#!/usr/bin/env bash
# Helpers of the ff_model device scripts (from the twenty-second session on): a dated script
# sources this file, then defines its calls. Run from the repository root on the device machine,
# with the release binaries carried in .device/bin (gpu_check builds), .device/ab (plugin builds)
# and .device/host/release (apex-host); every helper writes under $OUT.
#   row, step       a named, timed step with its exit status, into $OUT/table.txt
#   checks          ff_model_gpu_check's self-check: every fast shape, then three under every path
#   bench_ab        the in-process bench of several builds, alternating, with a summary table
#   host_ab         apex-host's ff_model suite with one plugin build; ab_table tabulates them
#   stage_ab        the refine blocks alone (--stage refines) of several builds
#   check_auto      the self-check of one build under auto, summarised into $OUT/sweep.txt
#   bench_row       one in-process bench of one build as a row of p50s in $OUT/sweep.txt
#   acceptance      issue 13's acceptance run: export, the PyTorch anchor, apex-host with its rows
#   build_patched   (on the build machine) a commit plus an experiment patch, built in a worktree of
#                   its own into .device/bin, .device/ab and an apex-host folder
set -u
B=.device/bin
HOST="env CARGO_TARGET_DIR=.device/host .device/host/release/apex-host"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
row() { printf '%-22s rc=%-4s %6ss\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
step() {
  local name=$1 to=$2; shift 2
  local t0; t0=$(date +%s.%N)
  timeout -s TERM "$to" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  row "$name" $rc "$(python3 -c "print(round($(date +%s.%N)-$t0,1))")"
}
checks() {  # $1: binary, $2: refine path of the first run; every fast shape, then three under every path
  step ff_check 300 $1 --only 'profile,tiles 32/16,256x256,B=3,B=8,K=64/160,B=4 256x256,B=4 K=64/160,B=4 tiles 32/16,C=16 36x60 tiles 6/3,nothing selected,no split' --refine $2
  step ff_check_paths 200 $1 --only 'profile,B=8,tiles 32/16' --refine fused,lean,split
  cat "$OUT/ff_check.log" "$OUT/ff_check_paths.log" >> "$OUT/checks.txt"; rm -f "$OUT/ff_check.log" "$OUT/ff_check_paths.log"
  echo "$1 ok: $(grep -cE '^ok' "$OUT/checks.txt") FAIL: $(grep -cE '^FAIL' "$OUT/checks.txt")"
  awk '/^FAIL/{f=1} f' "$OUT/checks.txt" | head -20
}
bench_ab() {  # $1: rounds, $2: shapes, then build:refine pairs; in-process bench, builds alternating
  local rounds=$1 shapes=$2; shift 2
  for r in $(seq "$rounds"); do for vr in "$@"; do
    $B/${vr%%:*} --bench-only --only "$shapes" --refine ${vr#*:} > /tmp/o.log 2>&1
    echo "-- $vr r$r rc=$?" >> $OUT/bench.txt
    grep -E '^(profile|B=[0-9]+|256x256|tiles 32/16) ' /tmp/o.log >> $OUT/bench.txt
  done; done
  python3 - "$OUT/bench.txt" <<'PY'
import collections, re, sys
rows = collections.defaultdict(lambda: collections.defaultdict(list))
v = None
for line in open(sys.argv[1]):
    if line.startswith('-- '): v = line.split()[1]; continue
    m = re.match(r'(profile|B=\d+|256x256|tiles 32/16)\s.*?\s(\d+\.\d+)\s+\d+\s', line)
    if m: rows[m.group(1)][v].append(m.group(2))
for case, per in rows.items():
    print('%-12s' % case, '  '.join('%s %s' % (k, '/'.join(x)) for k, x in per.items()))
PY
}

host_ab() {  # $1: label, $2: plugin build; apex-host's ff_model suite
  cp .device/ab/$2.so .device/host/release/libapex_plugin_ff_model.so
  step host_$1 150 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ab_$1
  python3 - /tmp/ab_$1/summary.json $1 <<'PY' | tee -a "$OUT/ab.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for k, c in sorted(s['benchmarks'].items()):
    # A short name from the case id: storage, batch, map, tile sizes, path.
    prec = k.split('/')[2]
    p = dict(kv.split('=', 1) for kv in k.split('/', 3)[3].split(','))
    name = '%s_B=%s_%sx%s_t%s/%s_%s' % (prec, p['batch'], p['height'], p['width'],
                                       p['tile_size_l0'], p['tile_size_l1'], p['path'])
    us = '%.2f us' % (c['p50_ms'] * 1e3) if 'p50_ms' in c else '-'
    print(sys.argv[2], name, us, c['status'])
PY
}
ab_table() {  # host_ab's rows as a table: a column per build and round, a row per case
  python3 - "$OUT/ab.txt" <<'PY'
import collections, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    label, name, us = line.split()[:3]
    rows[name][label] = us
labels = list(dict.fromkeys(l.split()[0] for l in open(sys.argv[1])))
print('%-34s' % 'case', *['%8s' % l for l in labels])
for name in sorted(rows): print('%-34s' % name, *['%8s' % rows[name].get(l, '-') for l in labels])
PY
}


stage_ab() {  # $1: rounds, then binaries: the refine blocks alone (--stage refines), profile and B=8
  local rounds=$1; shift
  for r in $(seq "$rounds"); do for v in "$@"; do
    $B/$v --bench-only --only 'profile,B=8' --refine auto --stage refines > /tmp/o.log 2>&1
    echo "$v r$r rc=$? $(grep -E '^(profile|B=8) ' /tmp/o.log | tr -s ' ' | tr '\n' ';')" | tee -a $OUT/stage.txt
  done; done
}

check_auto() {  # $1: label, $2: seconds, $3: binary, $4: shapes; self-check under auto, summarised
  local label=$1 to=$2 bin=$3 shapes=$4 log=$OUT/ff_check_$1.log
  step ff_check_$label $to $bin --only "$shapes" --refine auto
  echo "$label ok: $(grep -cE '^ok' $log) FAIL: $(grep -cE '^FAIL' $log)" | tee -a $OUT/sweep.txt
  awk '/^FAIL/{f=1} f' $log | head -20 >> $OUT/sweep.txt; rm -f $log
}
bench_row() {  # $1: label, $2: binary, $3: shapes, then env assignments; p50 per case, one row
  local label=$1 bin=$2 shapes=$3; shift 3
  env "$@" $bin --bench-only --only "$shapes" --refine auto > /tmp/o.log 2>&1
  echo "$label rc=$? $(grep -E '^(profile|B=[0-9]+|256x256|tiles 32/16) ' /tmp/o.log | sed -E 's/^(tiles) /\1_/' | awk '{print $1, $(NF-5)}' | tr '\n' ';')" | tee -a $OUT/sweep.txt
}

acceptance() {  # the plugin's export (.device/bin/ff_model_export), the PyTorch anchor, then
  # apex-host's ff_model CUDA suite with the anchor's rows; report and logs under $OUT
  step ff_export 120 $B/ff_model_export --out /tmp/ff_export --cuda
  mkdir -p /tmp/anchor; step ff_torch 240 env OUT=/tmp/anchor python3 benches/anchors/ff_model_torch.py /tmp/ff_export
  step ff_run 150 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/ff \
    --anchor-results /tmp/anchor/ff_model_torch.jsonl --format apex-x-gpu
  cp /tmp/ff/summary.json "$OUT/ff_summary.json"; cp /tmp/ff/summary.md "$OUT/ff_summary.md"
  cat "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log" /tmp/anchor/ff_model_torch.jsonl > "$OUT/anchor_run.txt" 2>/dev/null
  rm -f "$OUT/ff_export.log" "$OUT/ff_torch.log" "$OUT/ff_run.log"
  grep -iE "parity|max|torch|eager|compile|frames|fail" "$OUT/anchor_run.txt" | head -30
}

build_patched() {  # on the build machine, not the device: $1 commit, $2 patch, $3 build name (.device/bin/ff_$3
  # and .device/ab/$3.so), $4 the folder under .device for apex-host; a worktree of its own
  local root wt=/tmp/wt_$3; root=$(git rev-parse --show-toplevel)
  mkdir -p "$root/.device/bin" "$root/.device/ab" "$root/.device/$4"
  git worktree add -f "$wt" "$1" > /dev/null && (cd "$wt" &&
    git apply "$root/$2" &&
    CARGO_TARGET_DIR="$root/.device/slim" cargo build --release -p apex-plugin-ff-model \
      --example ff_model_gpu_check &&
    CARGO_TARGET_DIR="$root/.device/host" cargo build --release -p apex-host -p apex-plugin-ff-model) &&
    cp "$root/.device/slim/release/examples/ff_model_gpu_check" "$root/.device/bin/ff_$3" &&
    cp "$root/.device/host/release/libapex_plugin_ff_model.so" "$root/.device/ab/$3.so" &&
    cp "$root/.device/host/release/apex-host" "$root/.device/$4/apex-host"
  git worktree remove -f "$wt"
}
