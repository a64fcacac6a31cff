"""The anchor-result line every script here writes (docs/anchors.md; schema:
docs/schemas/anchor_result.schema.json), so `apex-host run|report --anchor-results FILE` can set
it beside the matching case.

    row(kernel, impl, params, precision, backend, us_per_call=..., gbps=..., **the_script's_own_keys)

`kernel` is our kernel id (`tile_ssm.forward`), `params` our bench.yaml parameter names (a subset
of the case's is enough), `precision` our label (fp32, fp16, bf16, fp8), `backend` cpu or cuda.
The time is `us_per_call` (canonical; `ms` is accepted too and must agree). A row without a time
says why in `error`. The script's other keys follow the canonical ones unchanged.
"""
import platform

PRECISIONS = ("fp32", "fp16", "bf16", "fp8")
BACKENDS = ("cpu", "cuda", "trt")
CANONICAL = ("kernel", "impl", "params", "precision", "backend", "us_per_call", "gbps", "device", "note",
             "cache", "error")


def row(kernel, impl, params, precision, backend, us_per_call=None, *, gbps=None, device=None, note=None,
        cache=None, error=None, **extra):
    """One line of the schema, checked here so a script cannot write a line apex-host refuses."""
    r = dict(kernel=kernel, impl=impl, params=dict(params), precision=precision, backend=backend,
             us_per_call=us_per_call)
    for key, value in (("gbps", gbps), ("device", device), ("note", note), ("cache", cache), ("error", error)):
        if value is not None:
            r[key] = value
    clash = sorted(set(extra) & set(CANONICAL))
    assert not clash, f"extra keys shadow canonical ones: {clash}"
    r.update(extra)
    check(r)
    return r


def check(r):
    for key in ("kernel", "impl", "precision", "backend"):
        assert isinstance(r.get(key), str) and r[key].strip(), f"{key} must be a non-empty string: {r}"
    assert isinstance(r.get("params"), dict), f"params must be an object: {r}"
    for name, v in r["params"].items():
        ok = isinstance(v, (str, int, float, bool)) or (
            isinstance(v, list) and v and all(isinstance(d, int) and not isinstance(d, bool) for d in v))
        assert ok, f"params.{name} must be a string, number, boolean or list of integers: {r}"
    assert r["precision"] in PRECISIONS, f"precision {r['precision']!r} is not one of {PRECISIONS}"
    assert r["backend"] in BACKENDS, f"backend {r['backend']!r} is not one of {BACKENDS}"
    us = r.get("us_per_call")
    assert us is None or us > 0, f"us_per_call must be above 0: {r}"
    assert us is not None or r.get("ms") is not None or r.get("error"), f"a row without a time needs an error: {r}"
    assert r.get("cache") in (None, "dram_cold", "l2_hot"), f"cache must be dram_cold or l2_hot: {r}"


def cpu_name():
    """The CPU model, for `device` on CPU rows."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
