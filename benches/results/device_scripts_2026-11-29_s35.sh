#!/usr/bin/env bash
# Thirty-fifth session (2026-11-29): apex-host's batch hold against its earlier one (the thirty-
# fourth session's prepared next3), and the L1 refine's shape at B=8.
# Usage on the device machine: bash benches/results/device_scripts_2026-11-29_s35.sh callN
# Binaries (built here at a82af74 unless named):
#   .device/host_old/apex-host  apex-host at 34d3cfc (before 77141ef: the hold sized per launch)
#   .device/host_new/apex-host  apex-host at a82af74 (the hold outlasts the measured enqueue)
#   .device/ab/s35.so           the ff_model plugin at a82af74
#   .device/bin/ff_s35          ff_model_gpu_check at a82af74
#   .device/bin/ff_x35t8        ff_s35 plus ff_model_t8_shared_experiment_s35.patch: with
#                               APEX_FF_X_T8_SHARED set the t = 8 wgmma refine asks for WG_SMEM
#                               (two CTAs a SM) instead of WG_SMEM_ALONE
#   .device/host_x/apex-host    apex-host plus calls_host_order_experiment_s35.patch (grown call
#   .device/bin/ff_x35n         by call; the patch is its last state): env switches
#                               APEX_X_MIN_SAMPLE_S, APEX_X_NO_HOLD, APEX_X_SKIP_MODES,
#                               APEX_X_SKIP_COLD, APEX_X_SKIP_LAUNCH, APEX_X_NO_MONITOR,
#                               APEX_X_SLEEP_MS, APEX_X_BATCH_TWICE in apex-host; APEX_FF_X_CALLS,
#                               APEX_FF_X_SETUP_SEED, APEX_FF_X_PLAIN, APEX_FF_X_PLAIN_EVENTS,
#                               APEX_FF_X_NO_POST, APEX_FF_X_SLEEP_MS, APEX_FF_X_PAD_KB,
#                               APEX_FF_X_DOT in the bench (ff_model_gpu_check)
#   .device/bin/ff_x35b         ff_x35n plus ff_model_base_last_experiment_s35.patch (which holds
#   .device/ab/x35b.so          both): APEX_FF_X_BASE_LAST enqueues ff_base after the levels
# Log: benches/results/ff_model_host_order_h200_2026-11-29_s35.txt (every call's rows).
source benches/results/device_lib.sh
source <(sed -n '/^vrow()/,/^}/p;/^timeline()/,/^}/p' benches/results/device_scripts_2026-11-29_s34.sh)

# apex-host's fp16 fast-path cases on the profile's map (B=1 and B=8), for --filter.
PROFILE_CASES='ff_model.infer/cuda/fp16/batch=*,*,height=128,*path=fast,tile_size_l0=16*'

host_p50s() {  # $1 summary.json, $2 label, then any of: modes (each case's timing modes after
  # its p50), first (the p50s apex-host with APEX_X_BATCH_TWICE wrote to /tmp/xfirst.txt)
  python3 - "$@" <<'PY3' | tee -a $OUT/sweep.txt
import json, sys, os
s = json.load(open(sys.argv[1]))
extras = sys.argv[3:]
rows = []
for k, c in sorted(s['benchmarks'].items()):
    rows.append('B=%s %.2f' % (k.split('batch=')[1].split(',')[0], c['p50_ms'] * 1e3))
    if 'modes' in extras:
        rows.append('modes ' + ','.join(sorted(c['timing'])))
if 'first' in extras:
    first = open('/tmp/xfirst.txt').read().split('\n') if os.path.exists('/tmp/xfirst.txt') else []
    print(sys.argv[2], ' '.join(rows), '| first batches:', ' '.join(l.split()[2] for l in first if l))
else:
    print(sys.argv[2], ' '.join(rows))
PY3
}

host_rows() {  # $1 summary.json, $2 label: the fp16 fast profile-map rows, p50 and short holds
  python3 - "$1" "$2" <<'PY3' | tee -a $OUT/sweep.txt
import json, sys
s = json.load(open(sys.argv[1]))
rows = []
for k, c in sorted(s['benchmarks'].items()):
    if '/fp16/' in k and 'path=fast' in k and 'height=128' in k and 'tile_size_l0=16' in k:
        b = c['timing']['batch']
        rows.append('B=%s %.2f short %s/%s' % (k.split('batch=')[1].split(',')[0], c['p50_ms'] * 1e3,
                                              b.get('short_holds', 0), b['stats']['n']))
print(sys.argv[2], ' '.join(rows))
PY3
}

call1() {  # the two hosts on one plugin, two rounds, with the in-process bench; t = 8 two a SM
  cp .device/ab/s35.so .device/host/release/libapex_plugin_ff_model.so
  for r in 1 2; do
    for h in old new; do
      cp .device/host_$h/apex-host .device/host/release/apex-host
      step host_${h}_r$r 150 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/h_$h
      host_rows /tmp/h_$h/summary.json "host $h r$r"
    done
    vrow ff_s35 'profile,B=8,B=16' "bench r$r" "" X=1
    vrow ff_x35t8 'profile,B=8,B=16' "t8 two a SM r$r" "" APEX_FF_X_T8_SHARED=1
  done
  cp /tmp/h_new/summary.json $OUT/host_new_summary.json
  step t8_check 120 env APEX_FF_X_T8_SHARED=1 $B/ff_x35t8 --only 'profile,B=8,B=16' --precision fp16 --refine auto
  echo "t8 shared ok: $(grep -cE '^ok' $OUT/t8_check.log) FAIL: $(grep -cE '^FAIL' $OUT/t8_check.log)" | tee -a $OUT/sweep.txt
  timeline t8shared ff_x35t8 B=8 APEX_FF_X_T8_SHARED=1
  cat $OUT/table.txt
}


call2() {  # does a batch sample's size move the per-call figure? apex-host at 1, 3 and 10 ms a
  # sample (host_x: APEX_X_MIN_SAMPLE_S overrides the 1-ms floor), and the bench at 23, 60 and
  # 240 calls a graph (ff_x35n: APEX_FF_X_CALLS), two rounds; calls_experiment_s35.patch
  cp .device/ab/s35.so .device/host/release/libapex_plugin_ff_model.so
  cp .device/host_x/apex-host .device/host/release/apex-host
  for r in 1 2; do
    for s in 0.001 0.003 0.01; do
      step host_x_${s}_r$r 200 env APEX_X_MIN_SAMPLE_S=$s $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hx
      python3 - /tmp/hx/summary.json "host min sample $s r$r" <<'PY3' | tee -a $OUT/sweep.txt
import json, sys
s = json.load(open(sys.argv[1]))
rows = []
for k, c in sorted(s['benchmarks'].items()):
    b = c['timing']['batch']
    rows.append('B=%s %.2f (%s sets x %s calls, n %s)' % (k.split('batch=')[1].split(',')[0],
                c['p50_ms'] * 1e3, b['buffer_sets'], b['calls_per_sample'], b['stats']['n']))
print(sys.argv[2], ' '.join(rows))
PY3
    done
    for n in 23 60 240; do
      vrow ff_x35n 'profile,B=8' "bench calls $n r$r" "" APEX_FF_X_CALLS=$n
    done
  done
  cat $OUT/table.txt
}


call3() {  # what of apex-host's run makes its figure ~3.7 us longer than the bench's? host_x
  # (calls_experiment_s35.patch): APEX_X_NO_HOLD (no hold kernel before a sample),
  # APEX_X_SKIP_MODES (no cold and launch modes before the batch), APEX_X_NO_MONITOR (no NVML
  # window); the bench (ff_x35n) at setup seed 5 (its own) and 123 (apex-host's), two rounds
  cp .device/ab/s35.so .device/host/release/libapex_plugin_ff_model.so
  cp .device/host_x/apex-host .device/host/release/apex-host
  for r in 1 2; do
    for v in X=1 APEX_X_NO_HOLD=1 APEX_X_SKIP_MODES=1 APEX_X_NO_MONITOR=1 "APEX_X_NO_HOLD=1 APEX_X_SKIP_MODES=1 APEX_X_NO_MONITOR=1"; do
      step host_x_r$r 200 env $v $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hx
      host_p50s /tmp/hx/summary.json "host $v r$r"
    done
    for seed in 5 123; do
      vrow ff_x35n 'profile,B=8' "bench setup seed $seed r$r" "" APEX_FF_X_SETUP_SEED=$seed
    done
    vrow ff_x35n 'profile,B=8' "bench setup seed 123 --seed 123 r$r" "--seed 123" APEX_FF_X_SETUP_SEED=123
  done
}


call4() {  # which mode before the batch slows it: apex-host skipping cold, launch or both
  # (host_x: APEX_X_SKIP_COLD, APEX_X_SKIP_LAUNCH, APEX_X_SKIP_MODES); the bench after N plain
  # calls, each on a drained stream as the launch mode runs them (ff_x35n: APEX_FF_X_PLAIN=N)
  cp .device/ab/s35.so .device/host/release/libapex_plugin_ff_model.so
  cp .device/host_x/apex-host .device/host/release/apex-host
  for r in 1 2; do
    for v in X=1 APEX_X_SKIP_COLD=1 APEX_X_SKIP_LAUNCH=1 APEX_X_SKIP_MODES=1; do
      step host_x_r$r 200 env $v $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hx
      host_p50s /tmp/hx/summary.json "host $v r$r" modes
    done
    for n in 0 30 300 3000; do
      vrow ff_x35n 'profile,B=8' "bench plain $n r$r" "" APEX_FF_X_PLAIN=$n
    done
  done
}


call5() {  # is it time or work? apex-host without the modes but asleep 400 ms before the batch
  # (APEX_X_SLEEP_MS), or with a first batch before the reported one (APEX_X_BATCH_TWICE: the
  # first's p50 in /tmp/xfirst.txt), with and without the modes; the bench asleep 400 ms before
  # its timing (APEX_FF_X_SLEEP_MS)
  cp .device/ab/s35.so .device/host/release/libapex_plugin_ff_model.so
  cp .device/host_x/apex-host .device/host/release/apex-host
  for r in 1 2; do
    for v in X=1 APEX_X_SKIP_MODES=1 "APEX_X_SKIP_MODES=1 APEX_X_SLEEP_MS=400" "APEX_X_SKIP_MODES=1 APEX_X_BATCH_TWICE=1" APEX_X_BATCH_TWICE=1; do
      rm -f /tmp/xfirst.txt
      step host_x_r$r 200 env $v $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hx
      host_p50s /tmp/hx/summary.json "host $v r$r" first
    done
    for ms in 0 400; do
      vrow ff_x35n 'profile,B=8' "bench sleep $ms r$r" "" APEX_FF_X_SLEEP_MS=$ms
    done
  done
}


call6() {  # the bench after N plain calls each between two timing events, as apex-host's launch
  # mode runs them (ff_x35n: APEX_FF_X_PLAIN=N APEX_FF_X_PLAIN_EVENTS=1), two rounds
  for r in 1 2; do
    vrow ff_x35n 'profile,B=8' "bench plain 300 r$r" "" APEX_FF_X_PLAIN=300
    vrow ff_x35n 'profile,B=8' "bench plain 300 timed r$r" "" APEX_FF_X_PLAIN=300 APEX_FF_X_PLAIN_EVENTS=1
    vrow ff_x35n 'profile,B=8' "bench plain 3000 timed r$r" "" APEX_FF_X_PLAIN=3000 APEX_FF_X_PLAIN_EVENTS=1
    vrow ff_x35n 'profile,B=8' "bench plain 1 timed r$r" "" APEX_FF_X_PLAIN=1 APEX_FF_X_PLAIN_EVENTS=1
  done
}


call7() {  # the bench in apex-host's order: N plain calls before the rotation and none after it
  # (ff_x35n: APEX_FF_X_PLAIN=N APEX_FF_X_NO_POST=1), against its own order, two rounds
  for r in 1 2; do
    vrow ff_x35n 'profile,B=8' "bench own order r$r" "" X=1
    vrow ff_x35n 'profile,B=8' "bench no post r$r" "" APEX_FF_X_NO_POST=1
    vrow ff_x35n 'profile,B=8' "bench plain 300 no post r$r" "" APEX_FF_X_PLAIN=300 APEX_FF_X_NO_POST=1
    vrow ff_x35n 'profile,B=8' "bench plain 1 no post r$r" "" APEX_FF_X_PLAIN=1 APEX_FF_X_NO_POST=1
    vrow ff_x35n 'profile,B=8' "bench plain 300 timed no post r$r" "" APEX_FF_X_PLAIN=300 APEX_FF_X_PLAIN_EVENTS=1 APEX_FF_X_NO_POST=1
  done
}


call8() {  # does the buffer sets' placement move the figure? the bench with a kept allocation of
  # N KiB made just before the rotation (ff_x35n: APEX_FF_X_PAD_KB=N), in its own order and in
  # apex-host's (300 plain calls before the rotation, none after)
  for r in 1 2; do
    for kb in 0 4 64 2048 2052 65536; do
      vrow ff_x35n 'profile,B=8' "bench pad ${kb}K r$r" "" APEX_FF_X_PAD_KB=$kb
    done
    for kb in 0 2048 65536; do
      vrow ff_x35n 'profile,B=8' "bench host order pad ${kb}K r$r" "" APEX_FF_X_PAD_KB=$kb APEX_FF_X_PLAIN=300 APEX_FF_X_NO_POST=1
    done
  done
}


call9() {  # the captured graphs of the two orders side by side (ff_x35n: APEX_FF_X_DOT writes
  # cuGraphDebugDotPrint's output), a graph of two calls each
  vrow ff_x35n 'profile' "dot own order" "" APEX_FF_X_DOT=$OUT/own APEX_FF_X_CALLS=2
  vrow ff_x35n 'profile' "dot host order" "" APEX_FF_X_DOT=$OUT/host APEX_FF_X_CALLS=2 APEX_FF_X_PLAIN=300 APEX_FF_X_NO_POST=1
  vrow ff_x35n 'profile' "own order 60 calls" "" X=1
  vrow ff_x35n 'profile' "host order 60 calls" "" APEX_FF_X_PLAIN=300 APEX_FF_X_NO_POST=1
  python3 - $OUT/own_b1.dot $OUT/host_b1.dot <<'PY3' | tee -a $OUT/sweep.txt
import re, sys, collections
def norm(p):
    t = open(p).read()
    t = re.sub(r'0x[0-9a-fA-F]+', 'X', t)
    return t.splitlines()
a, b = norm(sys.argv[1]), norm(sys.argv[2])
for name, lines in (('own', a), ('host', b)):
    edges = sum(1 for l in lines if '->' in l)
    print(name, 'lines', len(lines), 'edges', edges)
import difflib
d = [l for l in difflib.unified_diff(a, b, lineterm='', n=0) if not l.startswith('@@')]
print('diff lines', len(d))
for l in d[:60]: print(l[:300])
PY3
}


call10() {  # where the host order's extra time goes: one traced call (FF_TIMELINE) of the profile
  # and of B=8 in each order
  for shape in profile B=8; do
    timeline own ff_x35n $shape X=1
    timeline host ff_x35n $shape APEX_FF_X_PLAIN=300 APEX_FF_X_NO_POST=1
  done
}


call11() {  # the timelines of call 10 had the host order's runs take turns: are the graph's
  # branches sharing hardware queues? Both orders and apex-host with CUDA_DEVICE_MAX_CONNECTIONS
  # at 8 (the default) and 32
  cp .device/ab/s35.so .device/host/release/libapex_plugin_ff_model.so
  cp .device/host_new/apex-host .device/host/release/apex-host
  for r in 1 2; do
    for q in 8 32; do
      vrow ff_x35n 'profile,B=8' "own order connections $q r$r" "" CUDA_DEVICE_MAX_CONNECTIONS=$q
      vrow ff_x35n 'profile,B=8' "host order connections $q r$r" "" CUDA_DEVICE_MAX_CONNECTIONS=$q APEX_FF_X_PLAIN=300 APEX_FF_X_NO_POST=1
      step host_q$q 200 env CUDA_DEVICE_MAX_CONNECTIONS=$q $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hq
      host_rows /tmp/hq/summary.json "apex-host connections $q r$r"
    done
  done
}


call12() {  # the base pass enqueued after the levels instead of before them (ff_x35b, x35b.so:
  # APEX_FF_X_BASE_LAST; base_last_experiment_s35.patch), so that its graph node comes after
  # run 0's first: both orders of the bench, and apex-host, two rounds
  cp .device/ab/x35b.so .device/host/release/libapex_plugin_ff_model.so
  cp .device/host_new/apex-host .device/host/release/apex-host
  for r in 1 2; do
    for v in X=1 APEX_FF_X_BASE_LAST=1; do
      vrow ff_x35b 'profile,B=8,B=16' "own order $v r$r" "" $v
      vrow ff_x35b 'profile,B=8,B=16' "host order $v r$r" "" $v APEX_FF_X_PLAIN=300 APEX_FF_X_NO_POST=1
      step host_b 200 env $v $HOST run --no-build --backends cuda --filter "$PROFILE_CASES" --output-dir /tmp/hb
      host_rows /tmp/hb/summary.json "apex-host $v r$r"
    done
  done
  step check_base_last 120 env APEX_FF_X_BASE_LAST=1 $B/ff_x35b --only 'profile,B=8,tiles 32/16' --precision fp16,bf16,fp32 --refine auto
  echo "base last: ok $(grep -cE '^ok' $OUT/check_base_last.log) FAIL $(grep -cE '^FAIL' $OUT/check_base_last.log)" | tee -a $OUT/sweep.txt
}


next1() {  # run in the thirty-sixth session (ff_model_ce_base_h200_2026-11-29_s36.txt): what in apex-host's order slows the replays?
  # Binary .device/bin/ff_x36o (build_next): ff_model_gpu_check plus
  # ff_model_order_bisect_experiment_s35.patch (`--order host` with APEX_FF_X_PRE=N plain calls
  # before the rotation, APEX_FF_X_POST=K after it, APEX_FF_X_SETS=N sets, APEX_FF_X_THROWAWAY a
  # graph captured and dropped before the timed one, _RUN also replayed once;
  # APEX_FF_X_CARVEOUT=P sets every fast kernel's preferred shared-memory carveout to P %: a
  # candidate is SMs reconfiguring their L1/shared split between kernels whose preferences differ,
  # the driver choosing each by what ran before; one carveout for all cost B=8 4.5-15 us in the
  # thirty-third session, so only the two orders' difference under it tells). One plain call
  # before the rotation three times: call 7 read B=8 slow and the profile fast after it, which
  # two self-sustaining placements picked by the state at the first replay would explain.
  # Two rounds.
  local o='--order host'
  for r in 1 2; do
    vrow ff_x36o 'profile,B=8' "bench order r$r" "" X=1
    vrow ff_x36o 'profile,B=8' "host order r$r" "$o" X=1
    for k in 1 4 15; do vrow ff_x36o 'profile,B=8' "host order post $k r$r" "$o" APEX_FF_X_POST=$k; done
    for n in 1 1 1 2 4 16 64; do vrow ff_x36o 'profile,B=8' "host order pre $n r$r" "$o" APEX_FF_X_PRE=$n; done
    vrow ff_x36o 'profile,B=8' "host order one set r$r" "$o" APEX_FF_X_SETS=1
    vrow ff_x36o 'profile,B=8' "bench order one set r$r" "" APEX_FF_X_SETS=1
    vrow ff_x36o 'profile,B=8' "host order throwaway r$r" "$o" APEX_FF_X_THROWAWAY=1
    vrow ff_x36o 'profile,B=8' "host order throwaway run r$r" "$o" APEX_FF_X_THROWAWAY=1 APEX_FF_X_THROWAWAY_RUN=1
    for pct in 100 0; do
      vrow ff_x36o 'profile,B=8' "bench order carveout $pct r$r" "" APEX_FF_X_CARVEOUT=$pct
      vrow ff_x36o 'profile,B=8' "host order carveout $pct r$r" "$o" APEX_FF_X_CARVEOUT=$pct
    done
  done
}


next2() {  # run in the thirty-sixth session (ff_model_ce_base_h200_2026-11-29_s36.txt): ff_base beside the L0 refines at B=8.
  # In B=8's timeline (call 1, t = 8 shared; the same in the thirty-fourth session's) 36 SMs held
  # no refine CTA at all from 35 to 44 us while refine CTAs waited: the SMs of the 64 base blocks
  # (47 us each); in every B=8 timeline's co-residency table a base block shares SMs with base
  # and FiLM CTAs, never with a t = 16 refine (call 10, apex-host's order: one base block a SM,
  # 64 SMs without a refine CTA). Two candidate causes: (1) the shared-memory
  # carveout (one carveout for every kernel lost, thirty-third session, call 1: 100 % B=8 +15 us,
  # 72 % +4.5, the FiLM kernels then short of L1; not tried: ff_base's alone): ff_base uses no shared
  # memory, so its SMs may be configured with little of it, and a SM cannot change its carveout
  # while a CTA is resident; (2) registers: a 256-thread base block (64 a thread, 16 K) and two
  # t = 16 wgmma CTAs (124-128, 32 K each) do not fit 64 K, which explains one refine CTA
  # beside a base block, not none. ptxas compiles the wgmma refine at 112 registers with no spill
  # (57 K for two), which leaves a 128-thread base block room.
  # Binary .device/bin/ff_x36b (build_next): ff_model_gpu_check plus
  # ff_model_base_beside_refines_experiment_s35.patch: APEX_FF_X_CARVEOUT=P (every fast
  # kernel's preferred carveout, %; with APEX_FF_X_CARVEOUT_BASE_ONLY ff_base's alone; two t = 16
  # CTAs need the 164-KiB configuration, 72 %), APEX_NVRTC_DEFINES FF_X_WG_MAXNREG=N (the wgmma entries
  # under __maxnreg__(N) instead of __launch_bounds__(256, 2)), APEX_FF_X_BASE_THREADS=T and
  # APEX_FF_X_BASE_BANDS=N (ff_base's block size and bands a block; by default the same threads
  # in all). Self-checks first, then two rounds, then B=8's timelines.
  local c='APEX_FF_X_CARVEOUT_BASE_ONLY=1 APEX_FF_X_CARVEOUT=100' m='APEX_NVRTC_DEFINES=FF_X_WG_MAXNREG=112' t='APEX_FF_X_BASE_THREADS=128'
  step check_x36b 200 env $c $m $t $B/ff_x36b --only 'profile,B=8,B=16,tiles 32/16,256x256' --precision fp16 --refine auto
  echo "base carveout 100 + maxnreg 112 + base 128: ok $(grep -cE '^ok' $OUT/check_x36b.log) FAIL $(grep -cE '^FAIL' $OUT/check_x36b.log)" | tee -a $OUT/sweep.txt
  for r in 1 2; do
    vrow ff_x36b 'profile,B=8,B=16' "main r$r" "" X=1
    vrow ff_x36b 'profile,B=8,B=16' "base carveout 100 r$r" "" $c
    vrow ff_x36b 'profile,B=8,B=16' "base carveout 72 r$r" "" APEX_FF_X_CARVEOUT_BASE_ONLY=1 APEX_FF_X_CARVEOUT=72
    vrow ff_x36b 'profile,B=8,B=16' "maxnreg 112, base 128 threads r$r" "" $m $t
    vrow ff_x36b 'profile,B=8,B=16' "all three r$r" "" $c $m $t
    vrow ff_x36b 'profile,B=8,B=16' "all three, 16 bands a block r$r" "" $c $m $t APEX_FF_X_BASE_BANDS=16
    vrow ff_x36b 'profile,B=8,B=16' "base carveout 100, host order r$r" "--order host" $c
    vrow ff_x36b 'profile,B=8,B=16' "all three, host order r$r" "--order host" $c $m $t
  done
  timeline carveout ff_x36b B=8 $c
  timeline all ff_x36b B=8 "APEX_NVRTC_DEFINES=FF_X_WG_MAXNREG=112 FF_TIMELINE FF_TIMELINE_CALL=300" $c $t
}


build_next() {  # on the build machine, not the device: the binaries next1 and next2 run, each
  # from this checkout's HEAD plus its patch in a worktree of its own (then carry
  # .device/bin/ff_x36o and .device/bin/ff_x36b)
  local root; root=$(git rev-parse --show-toplevel)
  mkdir -p "$root/.device/bin"
  for pair in ff_x36o:ff_model_order_bisect_experiment_s35.patch \
              ff_x36b:ff_model_base_beside_refines_experiment_s35.patch; do
    local bin=${pair%%:*} patch=${pair#*:} wt=/tmp/wt_${pair%%:*}
    git worktree add -f "$wt" HEAD > /dev/null && (cd "$wt" && git apply "$root/benches/results/$patch" &&
      CARGO_TARGET_DIR="$root/.device/slim" cargo build --release -p apex-plugin-ff-model \
        --example ff_model_gpu_check) && cp "$root/.device/slim/release/examples/ff_model_gpu_check" \
      "$root/.device/bin/$bin"
    git worktree remove -f "$wt"
  done
}


next_all() {  # next2, then next1, in one device call (~8 minutes by this session's step times;
  # carry .device/bin/ff_x36o and .device/bin/ff_x36b from build_next)
  next2
  next1
  cat $OUT/table.txt
}

"$@"
