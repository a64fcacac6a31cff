#!/usr/bin/env bash
# Device call F (issue 18): the CUDA suite (tile_ops + tile_ssm, quick) on one GPU and with
# --devices all; the pool with a GPU that keeps faulting; two shards on the two GPUs, merged.
set -u
B=.device/target/release
export CARGO_TARGET_DIR=.device/target
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $OUT/all.log
row() { printf '%-12s rc=%-4s %6ss\n' "$1" "$2" "$3" >> $OUT/table.txt; }
step() {
  local name=$1 to=$2; shift 2
  local t0=$(date +%s.%N)
  echo "=== $name: $*" >> $OUT/all.log
  timeout -s TERM $to "$@" > $OUT/$name.log 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  row "$name" $rc $(python3 -c "print(round($t1-$t0,1))")
  tail -c 2500 $OUT/$name.log >> $OUT/all.log
}
SUITE=(--no-build --backends cuda --quick --save-samples --filter 'tile_ops.*' --filter 'tile_ssm.*')
step single 290 $B/apex-host run "${SUITE[@]}" --output-dir $OUT/single
step multi 290 $B/apex-host run "${SUITE[@]}" --devices all --output-dir $OUT/multi
$B/apex-host compare $OUT/multi/summary.json $OUT/single/summary.json --output-dir $OUT/cmp > $OUT/cmp.log 2>&1; echo "compare rc=$?" >> $OUT/table.txt
T=$(mktemp -d); cp bench.yaml.d/*.yaml $T/
printf 'kernel: fixtures.device_fault\nproblem_size:\n  case: [0, 1, 2, 3, 4, 5, 6, 7]\n' > $T/50-fault.yaml
step fault 200 $B/apex-host run --no-build --fixtures --backends cuda --quick --devices all --config-dir $T \
  --filter 'fixtures.device_fault' --filter 'fixtures.cuda_known_duration' --output-dir $OUT/fault
t0=$(date +%s.%N)
( $B/apex-host run "${SUITE[@]}" --partition hash:1/2 --device 0 --output-dir $OUT/s1 > $OUT/s1.log 2>&1 ) &
( $B/apex-host run "${SUITE[@]}" --partition hash:2/2 --device 1 --output-dir $OUT/s2 > $OUT/s2.log 2>&1 ) &
wait
row shards 0 $(python3 -c "print(round($(date +%s.%N)-$t0,1))")
step merge 60 $B/apex-host merge $OUT/s1 $OUT/s2 --output-dir $OUT/merged
python3 - <<PY >> $OUT/table.txt
import json, statistics
def load(n): return json.load(open('$OUT/'+n+'/summary.json'))
s, m = load('single'), load('multi')
for n, r in (('single', s), ('multi', m)):
    t = r['time_accounting']; print(n, r['status'], r['counts'], 'wall', round(t['wall_s'],1), 'sampling %', round(t['sampling_pct'],1))
print('multi devices:', [(d['ordinal'], d['device'].get('name') if d['device'] else None, d['copy_bandwidth_gbps'], len(d['cpus']), d.get('taken_out')) for d in m['environment']['cuda_devices']])
from collections import Counter
print('cases per GPU (multi):', Counter(c.get('ran_on',{}).get('device') for c in m['benchmarks'].values()))
ratios=[]; outside=[]
for k, c in s['benchmarks'].items():
    d = m['benchmarks'].get(k)
    if c['status']!='ok' or not d or d['status']!='ok': continue
    r = d['p50_ms']/c['p50_ms']; ratios.append(r)
    st = c['timing'][c['headline']]['stats']; st2 = d['timing'][d['headline']]['stats']
    if st2['median_ci_high_ms'] < st['median_ci_low_ms'] or st2['median_ci_low_ms'] > st['median_ci_high_ms']: outside.append((k, round(r,4)))
print('p50 multi/single: n', len(ratios), 'median', round(statistics.median(ratios),4), 'min', round(min(ratios),4), 'max', round(max(ratios),4))
print('median CIs not overlapping:', len(outside), outside[:12])
f = load('fault')
print('fault:', f['status'], f['counts'], [(d['ordinal'], d.get('taken_out')) for d in f['environment']['cuda_devices']])
for k, c in sorted(f['benchmarks'].items()): print('  ', c['status'], c.get('ran_on',{}).get('device'), k, (c.get('reason') or '')[:110])
g = load('merged'); print('merged:', g['status'], g['counts'], [(x['partition'], x['cases'], round(x['wall_s'] or 0,1)) for x in g['plan']['merged_from']])
print('merged == single case set:', sorted(g['benchmarks']) == sorted(s['benchmarks']), 'statuses equal:', all(g['benchmarks'][k]['status']==s['benchmarks'][k]['status'] for k in s['benchmarks']))
PY
grep -E "^- (gate|checks|noise)|verdict" $OUT/cmp/regressions.md 2>/dev/null | head -8 >> $OUT/table.txt
rm -rf $OUT/single/kernels $OUT/multi/kernels $OUT/s1 $OUT/s2 $OUT/merged/kernels $OUT/fault/kernels
cat $OUT/table.txt
#!/usr/bin/env bash
# Device call G (issue 18): is the --devices all figure within the run-to-run noise of one GPU?
# Two single-GPU runs (A, B on GPU 0) and one --devices all run (M); B and M each against A.
set -u
B=.device/target/release
export CARGO_TARGET_DIR=.device/target
SUITE=(--no-build --backends cuda --quick --save-samples --filter 'tile_ops.*' --filter 'tile_ssm.*')
for r in A B M; do
  extra=(); [ $r = M ] && extra=(--devices all)
  t0=$(date +%s.%N)
  $B/apex-host run "${SUITE[@]}" "${extra[@]}" --output-dir $OUT/$r > $OUT/$r.log 2>&1
  echo "$r rc=$? wall=$(python3 -c "print(round($(date +%s.%N)-$t0,1))")" >> $OUT/table.txt
done
for r in B M; do
  $B/apex-host compare $OUT/$r/summary.json $OUT/A/summary.json --output-dir $OUT/cmp$r > /dev/null 2>&1
  echo "$r vs A: $(grep -E '^- noise-aware' $OUT/cmp$r/regressions.md)" >> $OUT/table.txt
done
python3 - <<PY >> $OUT/table.txt
import json, statistics
L = lambda n: json.load(open('$OUT/'+n+'/summary.json'))
a = L('A')
for n in ('B', 'M'):
    o = L(n); rs=[]; out=0
    for k, c in a['benchmarks'].items():
        d = o['benchmarks'][k]
        if c['status']!='ok' or d['status']!='ok': continue
        rs.append(d['p50_ms']/c['p50_ms'])
        s1 = c['timing'][c['headline']]['stats']; s2 = d['timing'][d['headline']]['stats']
        out += s2['median_ci_high_ms'] < s1['median_ci_low_ms'] or s2['median_ci_low_ms'] > s1['median_ci_high_ms']
    dev = sorted(abs(r-1) for r in rs)
    print(n, 'vs A: n', len(rs), 'p50 ratio median %.4f min %.4f max %.4f' % (statistics.median(rs), min(rs), max(rs)), '|dev| p90 %.4f' % dev[int(0.9*len(dev))], 'median CIs apart:', out)
PY
rm -rf $OUT/A $OUT/B $OUT/M $OUT/cmpB $OUT/cmpM $OUT/*.log
cat $OUT/table.txt
#!/usr/bin/env bash
# Device call J: after the review refactor of the run's device code (calibration, slots, probe,
# schedule messages): --devices all on the tile_ssm quick suite, and the faulting-GPU check.
set -u
B=.device/target/release
export CARGO_TARGET_DIR=.device/target
$B/apex-host run --no-build --backends cuda --quick --filter 'tile_ssm.*' --devices all --output-dir $OUT/multi > $OUT/multi.log 2>&1
echo "multi rc=$?"
T=$(mktemp -d); cp bench.yaml.d/*.yaml $T/
printf 'kernel: fixtures.device_fault\nproblem_size:\n  case: [0, 1, 2, 3, 4, 5, 6, 7]\n' > $T/50-fault.yaml
$B/apex-host run --no-build --fixtures --backends cuda --quick --devices all --config-dir $T \
  --filter 'fixtures.device_fault' --filter 'fixtures.cuda_known_duration' --output-dir $OUT/fault > $OUT/fault.log 2>&1
echo "fault rc=$?"
python3 - <<PY
import json
from collections import Counter
m = json.load(open('$OUT/multi/summary.json'))
print('multi:', m['status'], m['counts'], 'wall', round(m['time_accounting']['wall_s'],1))
print('  devices:', [(d['ordinal'], (d['device'] or {}).get('name'), round(d['copy_bandwidth_gbps'] or 0), len(d['cpus']), d['taken_out']) for d in m['environment']['cuda_devices']])
print('  cases per GPU:', Counter(c['ran_on'].get('device') for c in m['benchmarks'].values()))
print('  pct_of_copy present:', sum(1 for c in m['benchmarks'].values() if (c.get('throughput') or {}).get('pct_of_copy_bandwidth') is not None))
f = json.load(open('$OUT/fault/summary.json'))
print('fault:', f['status'], f['counts'], [(d['ordinal'], d['taken_out']) for d in f['environment']['cuda_devices']])
print('  ok on GPU 0:', sum(1 for c in f['benchmarks'].values() if c['status']=='ok' and c['ran_on'].get('device')==0), 'failed on GPU 1:', sum(1 for c in f['benchmarks'].values() if c['status']=='failed' and c['ran_on'].get('device')==1))
PY
rm -rf $OUT/multi $OUT/fault
