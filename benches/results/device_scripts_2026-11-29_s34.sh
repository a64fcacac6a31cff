#!/usr/bin/env bash
# Thirty-fourth session (2026-11-29): programmatic dependent launch in ff_model's fast path, and
# the thirty-third session's prepared next2 (the bench at apex-host's seed).
# Usage on the device machine: bash benches/results/device_scripts_2026-11-29_s34.sh callN
# Binaries in .device/bin (ff_model_gpu_check builds):
#   ff_s33e main's kernels (75f9311; the later commits to a1cb3e8 changed no kernel or launch);
#           plugin .device/ab/s33e.so
#   ff_pdl  34d3cfc plus ff_model_pdl_switches_experiment_s34.patch: every fast kernel runs
#           `griddepcontrol.wait` then `griddepcontrol.launch_dependents` at its start (FF_AFTER_PREDECESSOR in prelude.cu;
#           APEX_NVRTC_DEFINES=FF_PDL_LATE leaves out the trigger: dependents launch as the CTAs
#           exit), and a level's launches carry the programmatic-serialisation attribute by
#           APEX_FF_X_PDL: all (the default), film (not the refines), none
#   ff_s34  the landed build: ff_pdl's `all` with FF_PDL_LATE's kernels (every fast kernel waits
#           for its predecessor at its start, none triggers early); plugin .device/ab/s34.so;
#           ff_model_export built from it
#   ff_trig ff_s34 plus ff_model_pdl_trigger_experiment_s34.patch: APEX_NVRTC_DEFINES
#           FF_X_TRIG_MASK=bits lets a kernel kind trigger its dependents right after its wait
#           (1 pack, 2 scan and map scan, 4 fc1, 8 out, 16 refine); 0 (unset) is ff_s34
source benches/results/device_lib.sh

# One in-process bench, p50 per case, as a row of $OUT/sweep.txt: $1 binary, $2 shapes, $3
# label, $4 extra flags ("" or "--stage refines"), then env assignments.
vrow() {
  local bin=$1 shapes=$2 label=$3 extra=$4; shift 4
  timeout 60 env "$@" $B/$bin --bench-only --only "$shapes" --precision fp16 --refine auto $extra > /tmp/x.log 2>&1
  echo "$label ${extra:-frame} rc=$? $(grep -E '^(profile|B=[0-9]+) ' /tmp/x.log | awk '{print $1, $(NF-5)}' | tr '\n' ' ')" | tee -a $OUT/sweep.txt
}

timeline() {  # $1 label, $2 binary, $3 shape, then env assignments: one traced call
  env APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=300" "${@:4}" $B/$2 --bench-only --only "$3" --precision fp16 > /tmp/tl.log 2>&1
  echo "== timeline $1 $3 rc=$?" | tee -a $OUT/sweep.txt
  grep -E '^(profile|B=[0-9]+) ' /tmp/tl.log | tee -a $OUT/sweep.txt
  python3 benches/probes/ff_timeline.py /tmp/tl.log | tee -a $OUT/sweep.txt
}

call1() {  # ff_pdl: fp16 self-check; main and its switches alternating; timelines; then next2
  step ff_check_pdl 240 $B/ff_pdl --only 'profile,B=3,B=8,B=16,B=4 256x256,B=4 K=64/160,tiles 32/16,256x256,nothing selected,no split' --precision fp16 --refine auto
  cat $OUT/ff_check_pdl.log >> $OUT/checks.txt
  echo "ff_pdl ok: $(grep -cE '^ok' $OUT/ff_check_pdl.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_pdl.log)" | tee -a $OUT/sweep.txt
  for r in 1 2; do
    vrow ff_s33e 'profile,B=8,B=16' "main r$r" "" X=1
    for v in APEX_FF_X_PDL=none APEX_FF_X_PDL=film APEX_FF_X_PDL=all "APEX_FF_X_PDL=all APEX_NVRTC_DEFINES=FF_PDL_LATE"; do
      vrow ff_pdl 'profile,B=8,B=16' "pdl $v r$r" "" $v
    done
  done
  timeline pdl ff_pdl B=8 X=1
  timeline pdl ff_pdl profile X=1
  next2
}

call2() {  # the landing build: self-checks in every storage and path; apex-host, main and it
  # alternating; the acceptance run (export, the PyTorch anchor, apex-host with its rows)
  checks $B/ff_s34 auto
  for r in 1 2; do host_ab main_r$r s33e; host_ab s34_r$r s34; done
  ab_table
  cp .device/ab/s34.so .device/host/release/libapex_plugin_ff_model.so
  acceptance
}

call3() {  # the landed build as the GPU runs it: B=8's and the profile's timelines; the frame and
  # the refines alone
  timeline s34 ff_s34 B=8 X=1
  timeline s34 ff_s34 profile X=1
  vrow ff_s34 'profile,B=8,B=16' "s34" "" X=1
  vrow ff_s34 'profile,B=8,B=16' "s34" "--stage refines" X=1
}

call4() {  # ff_trig: an fp16 check with every kind triggering early; the landed build and three
  # masks alternating, two rounds
  step ff_check_trig 120 env APEX_NVRTC_DEFINES=FF_X_TRIG_MASK=31 $B/ff_trig --only 'profile,B=8,B=16' --precision fp16 --refine auto
  echo "ff_trig 31 ok: $(grep -cE '^ok' $OUT/ff_check_trig.log) FAIL: $(grep -cE '^FAIL' $OUT/ff_check_trig.log)" | tee -a $OUT/sweep.txt
  for r in 1 2; do
    vrow ff_s34 'profile,B=8,B=16' "s34 r$r" "" X=1
    for m in 6 14 7; do
      vrow ff_trig 'profile,B=8,B=16' "trig $m r$r" "" APEX_NVRTC_DEFINES=FF_X_TRIG_MASK=$m
    done
  done
}

next3() {  # prepared for the next session: does apex-host's batch hold explain its ~3.6 us a call
  # over the in-process bench? Two apex-host builds on the same plugin (s34.so): $HOST_OLD, built
  # before 77141ef (the hold sized per launch), and $HOST_NEW (77141ef or later: the hold outlasts
  # the measured enqueue, and timing.batch.short_holds counts the samples it did not cover); then
  # the in-process bench. Rebuild: CARGO_TARGET_DIR=.device/host cargo build --release -p apex-host
  # at each commit, copied to .device/host_old/apex-host and .device/host_new/apex-host
  cp .device/ab/s34.so .device/host/release/libapex_plugin_ff_model.so
  for r in 1 2; do
    for h in old new; do
      cp .device/host_$h/apex-host .device/host/release/apex-host
      step host_${h}_r$r 150 $HOST run --no-build --backends cuda --filter 'ff_model.*' --output-dir /tmp/h_$h
      python3 - /tmp/h_$h/summary.json "host $h r$r" <<'PY3' | tee -a $OUT/sweep.txt
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
    done
    vrow ff_s34 'profile,B=8' "bench r$r" "" X=1
  done
}

next2() {  # the thirty-third session's next2, as prepared there: the bench at five seeds, then
  # apex-host at seeds 123 and 21 (call 1 ran a copy of it, line for line)
  bash benches/results/device_scripts_2026-11-29_s33.sh next2
}

"$@"
