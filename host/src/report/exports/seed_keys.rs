//! [`SeedExport`]: the keys of a seed-style baseline. The seeds' baselines name metrics by their
//! place in the seed's own report: seed 000's GPU baseline by dotted paths into `perf_gpu.json`
//! (`benchmarks.tile_ops.tilepack.dispatch.p50_ms`), seed 001's CPU baseline by the flat keys of
//! `perf_current.json` (`tile_pack_p50_ms`), seed 003's TensorRT wrapper by `case.<label>.p50_ms`
//! over its shape sweep ([`super::trt_sweep`]). This module tells which export a baseline's keys
//! belong to and resolves one key against a run to the metric id of the case that fills it in
//! that export ([`super::apex_x_gpu::resolve_key`], [`super::apex_x_cpu::resolve_key`]), so the
//! gate checks exactly the number the export holds.

use crate::model::RunSummary;

use super::{apex_x_cpu, apex_x_gpu, trt_sweep};

/// The seed export whose keys a baseline uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedExport {
    /// Seed 000: dotted paths into `perf_gpu.json` (`--format apex-x-gpu`).
    ApexXGpu,
    /// Seed 001: the flat keys of `perf_cpu.json`'s `metrics` (`--format apex-x-cpu`).
    ApexXCpu,
    /// Seed 003's TensorRT wrapper: `case.<label>.p50_ms` over the engine shape sweep.
    TrtSweep,
}

impl SeedExport {
    /// Which keys `keys` are: `Ok(None)` for apex-host metric ids (`kernel/backend/precision/
    /// params/stat`, every key has a `/`), `Ok(Some(_))` when every key belongs to one seed
    /// export, and an error naming the first key that is neither (or that mixes the two).
    pub fn of_keys<'a>(keys: impl IntoIterator<Item = &'a str>) -> Result<Option<Self>, String> {
        let keys: Vec<&str> = keys.into_iter().collect();
        let ids = keys.iter().filter(|k| k.contains('/')).count();
        if ids == keys.len() {
            return Ok(None);
        }
        if let Some(id) = keys.iter().find(|k| k.contains('/')) {
            let seed = keys.iter().find(|k| !k.contains('/')).unwrap_or(&"");
            return Err(format!(
                "the baseline mixes metric ids (`{id}`) and seed keys (`{seed}`)"
            ));
        }
        if keys.iter().all(|k| k.starts_with("benchmarks.")) {
            return Ok(Some(Self::ApexXGpu));
        }
        if keys.iter().all(|k| trt_sweep::is_key(k)) {
            return Ok(Some(Self::TrtSweep));
        }
        let cpu = |k: &&str| apex_x_cpu::KEYS.iter().any(|(name, _, _)| name == k);
        if keys.iter().all(cpu) {
            return Ok(Some(Self::ApexXCpu));
        }
        let bad = keys
            .iter()
            .find(|k| !k.starts_with("benchmarks.") && !cpu(k) && !trt_sweep::is_key(k))
            .unwrap_or(&"");
        Err(format!(
            "metric key `{bad}` is neither a metric id `kernel/backend/precision/params/stat` nor \
             a seed key (apex-x-gpu: `benchmarks.<section>.<block>.p50_ms`; the TensorRT \
             wrapper: `case.<label>.p50_ms`; apex-x-cpu: {})",
            apex_x_cpu::KEYS
                .iter()
                .map(|(k, _, _)| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// The `--format` name of the export.
    pub fn format_name(self) -> &'static str {
        match self {
            Self::ApexXGpu => "apex-x-gpu",
            Self::ApexXCpu => "apex-x-cpu",
            Self::TrtSweep => "trt-sweep",
        }
    }

    /// The metric id of the case that fills `key` in this export of `summary`, or why the
    /// export has no number there.
    pub fn resolve(self, summary: &RunSummary, key: &str) -> Result<String, String> {
        match self {
            Self::ApexXGpu => apex_x_gpu::resolve_key(summary, key),
            Self::ApexXCpu => apex_x_cpu::resolve_key(summary, key),
            Self::TrtSweep => trt_sweep::resolve_key(summary, key),
        }
    }

    /// The `status` the seed's `required_status` is compared with: the GPU report's own
    /// `status` (`skipped` without a measured CUDA block, as the seed without CUDA); the CPU
    /// report has none, so the run's.
    pub fn status(self, summary: &RunSummary) -> String {
        match self {
            Self::ApexXGpu => apex_x_gpu::status(summary).0.to_string(),
            Self::ApexXCpu => summary.status.clone(),
            Self::TrtSweep => trt_sweep::status(summary).to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tell_their_export_and_strangers_are_named() {
        assert_eq!(SeedExport::of_keys(["k/cpu/fp32/-/p50_ms"]), Ok(None));
        assert_eq!(SeedExport::of_keys([]), Ok(None));
        assert_eq!(
            SeedExport::of_keys([
                "benchmarks.tile_ops.tilepack.dispatch.p50_ms",
                "benchmarks.tilessm.triton_dispatch.p95_ms"
            ]),
            Ok(Some(SeedExport::ApexXGpu))
        );
        assert_eq!(
            SeedExport::of_keys(["infer_p50_ms", "tile_pack_p50_ms"]),
            Ok(Some(SeedExport::ApexXCpu))
        );
        let e = SeedExport::of_keys(["tile_pack_p50_ms", "warp_p50_ms"]).unwrap_err();
        assert!(
            e.contains("`warp_p50_ms`") && e.contains("`infer_p95_ms`"),
            "{e}"
        );
        assert_eq!(
            SeedExport::of_keys(["case.default.p50_ms", "summary.p50_ms_max"]),
            Ok(Some(SeedExport::TrtSweep))
        );
        let e = SeedExport::of_keys(["k/cpu/fp32/-/p50_ms", "tile_pack_p50_ms"]).unwrap_err();
        assert!(e.contains("mixes"), "{e}");
    }
}
