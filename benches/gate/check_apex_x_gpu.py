#!/usr/bin/env python3
"""Check an apex-x-gpu export (perf_gpu.json) against the field list of seed 000.

Usage:
    python3 benches/gate/check_apex_x_gpu.py REPORT_DIR/perf_gpu.json [--strict]
    python3 benches/gate/check_apex_x_gpu.py REPORT_DIR            (reads REPORT_DIR/perf_gpu.json)

The field list is the seed's (seeds/000: top-level keys, p50_ms/p95_ms, the throughput fields,
peak_memory_mb, status=skipped with a reason for TensorRT) with the layout of the original
gpu_bench.py report (spec/apex-x-kernels.md 4.1). Every field must be present. A metric value may
be null only in a block that says why (status other than "ok" and a non-empty reason): apex-host
has no torch reference path, and a block whose case did not run says so. Those blocks are listed.
With --strict, the 12 keys the seed's GPU baseline gates must also hold numbers.

Exit status: 0 when every field is there, 1 naming each missing or unexplained field, 2 when the
file cannot be read. Standard library only.
"""

import json
import os
import sys

TOP_LEVEL = ["schema_version", "suite", "timestamp_utc", "environment", "config", "status",
             "benchmarks", "triton_autotune"]
ENVIRONMENT = ["python", "platform", "torch", "device", "dtype", "requested_dtype",
               "effective_dtype", "fp8_requested", "fp8_enabled", "fp8_fallback_reason",
               "runtime_caps"]
RUNTIME_CAPS = {
    "cuda": ["available", "device_count", "device_name", "compute_capability", "reason"],
    "triton": ["available", "version", "reason"],
    "tensorrt": ["python_available", "python_version", "python_reason", "headers_available",
                 "header_path", "int8_available", "int8_reason"],
    "fp8": ["available", "dtype_available", "supported_dtypes", "reason"],
}
CONFIG = ["batch", "channels", "height", "width", "tile_size", "kmax", "steps", "warmup", "iters",
          "seed", "dtype", "budget_b1", "budget_b2", "budget_total", "trt_engine_path",
          "trt_plugin_lib", "trt_input_shapes"]
METRICS = ["p50_ms", "p95_ms", "peak_memory_mb"]
END_TO_END_EXTRA = ["selected_l0_per_call", "selected_l1_per_call", "budget_b1_spent",
                    "budget_b2_spent"]
# section path -> (metric blocks with their throughput field, sections in the skipped form)
SECTIONS = {
    "tile_ops.tilepack": ({"reference": "tiles_per_s", "dispatch": "tiles_per_s"}, []),
    "tile_ops.tileunpack": ({"reference": "tiles_per_s", "dispatch": "tiles_per_s"}, []),
    "tile_ops.fusion_gate": ({"reference": "elements_per_s", "dispatch": "elements_per_s"}, []),
    "tilessm": ({"torch_reference": "tokens_per_s", "triton_dispatch": "tokens_per_s"},
                ["tensorrt_plugin"]),
    "end_to_end_infer": ({"torch_eager": "frames_per_s", "torch_triton_fastpath": "frames_per_s"},
                         ["tensorrt_engine"]),
}
WITH_BACKEND = ["tile_ops.tilepack", "tile_ops.tileunpack", "tile_ops.fusion_gate", "tilessm"]
# The 12 keys of the seed's committed GPU baseline (spec/apex-x-kernels.md 4.3).
BASELINE_KEYS = [
    "benchmarks.tile_ops.tilepack.dispatch.p50_ms",
    "benchmarks.tile_ops.tilepack.dispatch.p95_ms",
    "benchmarks.tile_ops.tileunpack.dispatch.p50_ms",
    "benchmarks.tile_ops.tileunpack.dispatch.p95_ms",
    "benchmarks.tile_ops.fusion_gate.dispatch.p50_ms",
    "benchmarks.tile_ops.fusion_gate.dispatch.p95_ms",
    "benchmarks.tilessm.triton_dispatch.p50_ms",
    "benchmarks.tilessm.triton_dispatch.p95_ms",
    "benchmarks.end_to_end_infer.torch_eager.p50_ms",
    "benchmarks.end_to_end_infer.torch_eager.p95_ms",
    "benchmarks.end_to_end_infer.torch_triton_fastpath.p50_ms",
    "benchmarks.end_to_end_infer.torch_triton_fastpath.p95_ms",
]


def at(doc, path):
    """The value at a dotted path, or KeyError naming the first missing part."""
    node = doc
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(path)
        node = node[part]
    return node


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check(doc, strict):
    """Returns (problems, notes): every missing or unexplained field, and the explained nulls."""
    problems, notes = [], []

    def need(obj, prefix, keys):
        for k in keys:
            if not isinstance(obj, dict) or k not in obj:
                problems.append("missing field `%s%s`" % (prefix, k))

    need(doc, "", TOP_LEVEL)
    need(doc.get("environment"), "environment.", ENVIRONMENT)
    caps = (doc.get("environment") or {}).get("runtime_caps")
    need(caps, "environment.runtime_caps.", list(RUNTIME_CAPS) + ["any_gpu_runtime"])
    for cap, keys in RUNTIME_CAPS.items():
        need((caps or {}).get(cap), "environment.runtime_caps.%s." % cap, keys)
    need(doc.get("config"), "config.", CONFIG)
    if doc.get("status") != "ok":
        problems.append("status is `%s`, not `ok`: %s (the seed's benchmarks are empty then)"
                        % (doc.get("status"), doc.get("reason", "no reason given")))
        return problems, notes

    for section, (blocks, skipped_forms) in SECTIONS.items():
        prefix = "benchmarks.%s" % section
        try:
            sec = at(doc, prefix)
        except KeyError:
            problems.append("missing section `%s`" % prefix)
            continue
        if section in WITH_BACKEND:
            need(sec, prefix + ".", ["backend", "fallback_reason"])
        for name, unit in blocks.items():
            path = "%s.%s" % (prefix, name)
            block = sec.get(name)
            if not isinstance(block, dict):
                problems.append("missing block `%s`" % path)
                continue
            fields = METRICS + [unit] + (END_TO_END_EXTRA if section == "end_to_end_infer" else [])
            need(block, path + ".", fields)
            nulls = [f for f in fields if f in block and block[f] is None]
            explained = block.get("status") not in (None, "ok") and block.get("reason")
            if block.get("status") == "ok":
                for f in ("p50_ms", "p95_ms"):
                    if not is_number(block.get(f)):
                        problems.append("`%s.%s` is not a number in a measured block" % (path, f))
            elif nulls and not explained:
                problems.append("`%s` has null fields (%s) without a status and reason"
                                % (path, ", ".join(nulls)))
            if explained:
                notes.append("%s: %s (%s)" % (path, block["status"], block["reason"]))
        for name in skipped_forms:
            path = "%s.%s" % (prefix, name)
            block = sec.get(name)
            if not isinstance(block, dict):
                problems.append("missing section `%s`" % path)
            elif block.get("status") == "skipped":
                if not block.get("reason"):
                    problems.append("`%s` is skipped without a reason" % path)
                else:
                    notes.append("%s: skipped (%s)" % (path, block["reason"]))
            elif block.get("status") == "failed" and block.get("reason"):
                notes.append("%s: failed (%s)" % (path, block["reason"]))
            else:
                # The seed's measured form: {status: "ok", ..., metrics: {p50_ms, p95_ms, ...}}.
                metrics = block.get("metrics")
                if not isinstance(metrics, dict):
                    problems.append("`%s` is neither skipped with a reason nor has `metrics`" % path)
                else:
                    need(metrics, path + ".metrics.", ["p50_ms", "p95_ms", "peak_memory_mb"])

    for key in BASELINE_KEYS:
        try:
            value = at(doc, key)
        except KeyError:
            problems.append("missing baseline key `%s`" % key)
            continue
        if strict and not is_number(value):
            problems.append("baseline key `%s` is %s, not a number (--strict)" % (key, json.dumps(value)))
    return problems, notes


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    flags = [a for a in argv[1:] if a.startswith("--")]
    unknown = [f for f in flags if f not in ("--strict", "--help")]
    if "--help" in flags or len(args) != 1 or unknown:
        sys.stderr.write(__doc__)
        return 2
    path = args[0]
    if os.path.isdir(path):
        path = os.path.join(path, "perf_gpu.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("check_apex_x_gpu: cannot read %s: %s\n"
                         "(hint: write it with `apex-host run --format apex-x-gpu` or "
                         "`apex-host report --format apex-x-gpu`)\n" % (path, e))
        return 2
    if not isinstance(doc, dict):
        sys.stderr.write("check_apex_x_gpu: %s is not a JSON object\n" % path)
        return 1
    problems, notes = check(doc, "--strict" in flags)
    for key in BASELINE_KEYS:
        try:
            print("%-60s %s" % (key, json.dumps(at(doc, key))))
        except KeyError:
            print("%-60s MISSING" % key)
    for n in notes:
        print("null with a reason: " + n)
    if problems:
        for p in problems:
            print("FAIL: " + p)
        print("check_apex_x_gpu: %d problem(s) in %s" % (len(problems), path))
        return 1
    print("check_apex_x_gpu: every field seed 000 names is present in %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
