"""The timeline of one ff_model call as the GPU ran it, from FF_TIMELINE's `FTL` lines.

ff_model's fast path compiles in a diagnostic with APEX_NVRTC_DEFINES="FF_TIMELINE
FF_TIMELINE_CALL=N" (plugins/ff_model/src/cuda/fast/prelude.cu): thread 0 of every CTA of the
process's call N records its kernel, a key that tells the runs of frames apart, its CTA and SM,
and the globaltimer at its entry and exit in device memory; the next call prints the records as

    FTL kernel key cta sm start_ns end_ns

This reads them (from a log file, or standard input) and prints each launch (a kernel and key) in
the order of its first CTA: its CTAs, the first CTA's entry, the last CTA's entry, the last exit
(microseconds from the call's first CTA), and its CTAs' lifetimes; then the CTAs resident a SM,
averaged over the SMs seen and 4-microsecond bins, by kind of kernel; then which kernels' CTAs
shared a SM and for how long; then, while each refine launch still had CTAs to place, the SMs
left empty or holding only other kernels' CTAs, and what those held. Where a process timed
several cases, each case's module counts its own calls, so one log may hold several calls' records:
only those within --window-us of the first record are read (default 1000, a call being ~0.1 ms).

    APEX_NVRTC_DEFINES="FF_TIMELINE FF_TIMELINE_CALL=300" \\
        ff_model_gpu_check --bench-only --only B=8 --refine auto > b8.log
    python3 benches/probes/ff_timeline.py b8.log
"""

import argparse
import collections
import statistics
import sys

# FfTlKernel in prelude.cu, in order.
NAMES = ["select", "base", "pack", "scan", "scan_map", "fc1", "out",
         "refine_t16", "refine_t8", "refine"]
# The kind of each kernel in the residency rows: the selection, the base pass, FiLM (the packs,
# scans and linears), the refines.
KIND = {0: "sel", 1: "base", 2: "film", 3: "film", 4: "film", 5: "film", 6: "film",
        7: "ref", 8: "ref", 9: "ref"}
BIN_NS = 4000


def name_of(kernel):
    return NAMES[kernel] if kernel < len(NAMES) else str(kernel)


def records(lines, window_us):
    """The records (kernel, key, cta, sm, start, end) within window_us of the first, their times
    in ns from the call's first CTA entry."""
    rows = [tuple(int(x) for x in line.split()[1:7]) for line in lines if line.startswith("FTL ")]
    if not rows:
        return []
    t0 = min(r[4] for r in rows)
    return [r[:4] + (r[4] - t0, r[5] - t0) for r in rows if r[4] - t0 < window_us * 1000]


def by_launch(rows):
    """Each launch (kernel, key) with its records, in the order of its first CTA."""
    by = collections.defaultdict(list)
    for r in rows:
        by[(r[0], r[1])].append(r)
    return sorted(by.items(), key=lambda kv: min(r[4] for r in kv[1]))


def launches(rows):
    numbered = {}
    print("call span %.2f us, %d CTAs recorded" % (max(r[5] for r in rows) / 1e3, len(rows)))
    print("%-11s %4s %5s %8s %8s %8s %8s | CTA life us p50 p90 max"
          % ("kernel", "key", "CTAs", "first", "last in", "last out", "span"))
    for (kernel, key), rs in by_launch(rows):
        n = numbered.setdefault(kernel, {}).setdefault(key, len(numbered[kernel]))
        life = sorted((r[5] - r[4]) / 1e3 for r in rs)
        first, last_in, last_out = min(r[4] for r in rs), max(r[4] for r in rs), max(r[5] for r in rs)
        print("%-11s %4d %5d %8.2f %8.2f %8.2f %8.2f | %6.2f %6.2f %6.2f" % (
            name_of(kernel), n, len(rs), first / 1e3, last_in / 1e3, last_out / 1e3,
            (last_out - first) / 1e3, statistics.median(life), life[int(0.9 * (len(life) - 1))], life[-1]))


def residency(rows):
    sms = len({r[3] for r in rows})
    bins = collections.defaultdict(lambda: collections.defaultdict(float))
    for r in rows:
        start, end = r[4], r[5]
        i = start // BIN_NS
        while i * BIN_NS < end:
            overlap = min(end, (i + 1) * BIN_NS) - max(start, i * BIN_NS)
            bins[i][KIND.get(r[0], "ref")] += overlap / BIN_NS
            i += 1
    print("resident CTAs a SM (mean over %d SMs) per %d us:" % (sms, BIN_NS // 1000))
    for i in sorted(bins):
        print("  %5.0f-%-5.0f" % (i * BIN_NS / 1e3, (i + 1) * BIN_NS / 1e3),
              " ".join("%s %.2f" % (k, bins[i][k] / sms) for k in ("sel", "base", "film", "ref")))


def coresidency(rows):
    """Microseconds two kernels' CTAs spent on the same SM, per pair of kernels: a pair that
    never shares a SM though both ran at once points at something other than registers and
    shared memory keeping them apart (a SM's L1/shared split, a cluster's placement)."""
    by_sm = collections.defaultdict(list)
    for r in rows:
        by_sm[r[3]].append(r)
    pairs = collections.Counter()
    for rs in by_sm.values():
        for i, a in enumerate(rs):
            for b in rs[i + 1:]:
                overlap = min(a[5], b[5]) - max(a[4], b[4])
                if overlap > 0:
                    pairs[tuple(sorted((name_of(a[0]), name_of(b[0]))))] += overlap
    print("CTAs of two kernels on one SM at once (us, summed over SMs):")
    for (a, b), ns in pairs.most_common():
        print("  %-11s %-11s %8.1f" % (a, b, ns / 1e3))


def waiting(rows, step_ns=1000):
    """For each refine launch, while some of its CTAs were not yet placed (from its first CTA's
    entry to its last's): per step, the SMs holding no CTA and those holding only other kernels'
    CTAs (neither refine); then what those SMs held, as the CTAs of each kernel a SM held
    ("base x2": two base blocks), with the steps at which some SM held that and the most SMs
    that held it at one step."""
    sms = {r[3] for r in rows}
    print("while a refine launch's CTAs waited: SMs empty / SMs with only non-refine CTAs")
    for (kernel, _), rs in by_launch(rows):
        if not name_of(kernel).startswith("refine"):
            continue
        first, last_in = min(r[4] for r in rs), max(r[4] for r in rs)
        cells = []
        held = collections.defaultdict(lambda: [0, 0])  # what an SM held: [steps, most SMs]
        for t in range(first, last_in, step_ns):
            here = collections.defaultdict(list)
            for r in rows:
                if r[4] <= t < r[5]:
                    here[r[3]].append(name_of(r[0]))
            empty = len(sms) - len(here)
            others = [v for v in here.values() if not any(n.startswith("refine") for n in v)]
            cells.append("%.0f:%d/%d" % (t / 1e3, empty, len(others)))
            for what, n in collections.Counter(sm_holding(v) for v in others).items():
                held[what][0] += 1
                held[what][1] = max(held[what][1], n)
        print("  %-11s %.1f-%.1f us  %s" % (name_of(kernel), first / 1e3, last_in / 1e3,
                                            " ".join(cells)))
        for what, (steps, most) in sorted(held.items(), key=lambda kv: -kv[1][0] * kv[1][1]):
            print("      held %-24s at %3d steps, at most %3d SMs" % (what, steps, most))


def sm_holding(names):
    """What one SM held, as its kernels' CTA counts: "base x2, fc1"."""
    return ", ".join(n if c == 1 else "%s x%d" % (n, c)
                     for n, c in sorted(collections.Counter(names).items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", help="a log with FTL lines (default: standard input)")
    parser.add_argument("--window-us", type=float, default=1000.0,
                        help="read the records within this many microseconds of the first")
    args = parser.parse_args()
    lines = open(args.log, errors="replace") if args.log else sys.stdin
    rows = records(lines, args.window_us)
    if not rows:
        print("no FTL lines: was the module compiled with FF_TIMELINE, and did call N + 1 run?")
        return 1
    launches(rows)
    residency(rows)
    coresidency(rows)
    waiting(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
