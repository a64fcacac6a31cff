//! The CUDA program of the GPU variants: the fast path's parts (`cuda/fast/*.cu`) and
//! `cuda/ff_eager.cu`, specialised for one storage type (`DTYPE`), compiled by NVRTC once per
//! (architecture, storage) and cached for the process by
//! `apex_plugin_api::cuda::compile_ptx_cached` (and on disk). Every shape is a kernel argument.

use apex_plugin_api::{
    PluginError,
    cuda::{STORAGE_CUH, compile_ptx_cached},
};
use cudarc::nvrtc::Ptx;

use crate::storage::Storage;

/// `cuda/fast/` parts named in order, each after a `#line 1 "<name>"` directive, as one string.
macro_rules! fast_parts {
    ($($name:literal),+ $(,)?) => {
        concat!($("#line 1 \"", $name, "\"\n", include_str!(concat!("cuda/fast/", $name))),+)
    };
}

/// The CUDA C of the fast path: its parts in order, one translation unit (`cuda/fast/prelude.cu`'s
/// header explains each kernel and lists the parts). Each part opens with a `#line` directive,
/// so NVRTC's diagnostics and line information (`APEX_NVRTC_LINEINFO=1`, for Nsight Compute's
/// source page) name the part's own file and line.
pub const FAST_SOURCE: &str = fast_parts!(
    "prelude.cu",
    "base.cu",
    "select.cu",
    "pack.cu",
    "film.cu",
    "refine_block.cu",
    "refine_split.cu",
    "refine_fused.cu",
    "refine_lean.cu",
    "refine_wg.cu",
);
/// The CUDA C of the eager path (one kernel per op); it uses the fast path's helpers.
pub const EAGER_SOURCE: &str = include_str!("cuda/ff_eager.cu");

/// Channels (planes) one `ff_base` block copies a tile row of (`BASE_CHANNELS` in the source).
pub const BASE_CHANNELS: usize = 8;
/// Bands (a tile row of `BASE_CHANNELS` planes of one frame) each `ff_base` block copies, one
/// after another: the pass runs beside the levels in few blocks (the profile 8, B=8 64), not in
/// one block a band ahead of them (`device/streams.rs` has the measurements). Host-side only: the
/// kernel loops over the bands its grid leaves.
pub const BASE_BANDS_PER_BLOCK: usize = 16;
/// Pixels of a tile one refine CTA covers (`CHUNK` in the source).
pub const CHUNK: usize = 32;
/// Most channels whose modulated rows a refine CTA stages at a time (`CB` in the source).
pub const CB: usize = 128;
/// Elements of a tile each `ff_apply` thread finishes (`APPLY_PER_THREAD` in the source).
pub const APPLY_PER_THREAD: usize = 4;
/// Rows of FiLM's first linear one `ff_film_fc1` block computes (`FC1_ROWS` in the source).
pub const FC1_ROWS: usize = 32;
/// Frames whose tokens one FiLM linear block multiplies by its weight slice (`FILM_TOKENS` in
/// the source).
pub const FILM_TOKENS: usize = 4;
/// Rows of FiLM's second linear one `ff_film_out` block computes (`FC2_ROWS` in the source).
pub const FC2_ROWS: usize = 64;
/// Channels a block of the pack-free levels' FiLM scan takes (`SCAN_MAP_CHANNELS` in the
/// source; its warps split each channel's tiles).
pub const SCAN_MAP_CHANNELS: usize = 4;
/// The most CTAs of one `ff_refine_apply` cluster (`MAX_CLUSTER` in the source): the portable
/// cluster size, so tiles up to 16x16 (eight chunks) run fused.
pub const MAX_CLUSTER: usize = 8;
/// Warps of every block (`WARPS` in the source).
pub const WARPS: usize = 8;
/// Threads of every block (`THREADS` in the source).
pub const THREADS: u32 = 32 * WARPS as u32;
/// The shapes `ff_refine_apply_lean` is also compiled for with the shape constant (`LEAN_ENTRY`
/// in the source): (channels, tile size, entry point). A level of one of them runs its own copy,
/// whose index math the compiler folds.
pub const LEAN_SHAPES: [(usize, usize, &str); 2] = [
    (128, 16, "ff_refine_apply_lean_c128_t16"),
    (128, 8, "ff_refine_apply_lean_c128_t8"),
];

/// The shapes the wgmma refine (`cuda/fast/refine_wg.cu`, fp16 on sm_90a) is compiled for:
/// (channels, tile size, entry point).
pub const WG_SHAPES: [(usize, usize, &str); 2] = [
    (128, 16, "ff_refine_wg_c128_t16"),
    (128, 8, "ff_refine_wg_c128_t8"),
];
/// The pack-free entry points of each shape of [`WG_SHAPES`] (same order), for the batches that
/// run in several runs of frames (`device/fast.rs`): the wgmma refine reading the tile from the
/// level's source map, then FiLM's scan taking the tile means from it, each for a storage-typed
/// source (L0's input) and an f32 one (L1's `l0map`).
pub const WG_MAP_ENTRIES: [WgMapEntries; 2] = [
    WgMapEntries {
        refine: ["ff_refine_wg_map_s_c128_t16", "ff_refine_wg_map_f_c128_t16"],
        scan: ["ff_film_scan_map_s_t16", "ff_film_scan_map_f_t16"],
    },
    WgMapEntries {
        refine: ["ff_refine_wg_map_s_c128_t8", "ff_refine_wg_map_f_c128_t8"],
        scan: ["ff_film_scan_map_s_t8", "ff_film_scan_map_f_t8"],
    },
];

/// One wgmma shape's pack-free entry points, each [storage-typed source, f32 source].
pub struct WgMapEntries {
    pub refine: [&'static str; 2],
    pub scan: [&'static str; 2],
}

/// Pixels of a tile one wgmma refine CTA covers (`WG_PIX` in the source).
pub const WG_PIX: usize = 64;
/// Bytes between the wgmma operand's k-adjacent core matrices (`WG_LBO` in the source).
pub const WG_LBO: usize = 144;
/// Bytes between the operand's 8-pixel groups beyond their core matrices (`WG_SBO_PAD`).
pub const WG_SBO_PAD: usize = 32;
/// Dynamic shared memory of a wgmma refine CTA (`WG_SMEM` in the source): the operand's hi and
/// lo parts (16-bit core matrices, 8 pixels by 8 of the 128 channels), then the chunk's raw
/// centre rows (f32, rows of `WG_PIX + 8`).
pub const WG_SMEM: usize =
    2 * (WG_PIX / 8) * ((128 / 8) * WG_LBO + WG_SBO_PAD) + 4 * 128 * (WG_PIX + 8);
// Two wgmma CTAs fit a SM's 228 KiB beside their static shared memory (under 4 KiB, ptxas) and
// the 1 KiB the driver reserves a CTA.
const _: () = assert!(2 * (WG_SMEM + 4 * 1024 + 1024) <= 228 * 1024);
/// Dynamic shared memory a wgmma refine launch asks for at tile size `t`: `WG_SMEM` (two CTAs
/// a SM) at t = 16, at t = 8 [`WG_SMEM_ALONE`] (one a SM). A SM runs about as many t = 8 CTAs
/// a second with one as with two (H200, Nsight Compute, thirtieth session, call 8: L1's refine
/// at B=8 in one run, 256 CTAs, 27.0 us two a SM, 28.2 one a SM in two waves), and in the call's
/// graph one a SM won (in process, B=8 114.3 -> 113.0 us, two rounds, the profile and B=3
/// unchanged; a reading: it leaves the other runs' launches room; again with the dependent
/// launches, thirty-fifth session: two a SM B=8 +2.2 us, B=16 +5 to +7); t = 16 alone on its SM
/// lost (B=8 126.1-126.4, B=3 68.1 -> 71.2; call 4 of
/// `benches/results/device_scripts_2026-11-28_s30.sh`).
pub fn wg_smem(t: usize) -> usize {
    if t == 8 { WG_SMEM_ALONE } else { WG_SMEM }
}
/// More than half of a SM's 228 KiB: a CTA that asks for it has its SM to itself.
pub const WG_SMEM_ALONE: usize = 120 * 1024;
const _: () = assert!(2 * WG_SMEM_ALONE > 228 * 1024 && WG_SMEM_ALONE + 4 * 1024 <= 227 * 1024);

/// The index in [`WG_SHAPES`] of the wgmma refine a level of `channels` channels and `t`-pixel
/// tiles runs, if it has one.
pub fn wg_shape(channels: usize, t: usize) -> Option<usize> {
    WG_SHAPES
        .iter()
        .position(|&(c, tt, _)| (c, tt) == (channels, t))
}

/// The index in [`LEAN_SHAPES`] of the copy a level of `channels` channels and `t`-pixel tiles
/// runs, if it has one.
pub fn lean_shape(channels: usize, t: usize) -> Option<usize> {
    LEAN_SHAPES
        .iter()
        .position(|&(c, tt, _)| (c, tt) == (channels, t))
}

/// The source for `storage`: one `#define` line, plugin-api's storage header (the storage type
/// and its conversions), then [`FAST_SOURCE`] and [`EAGER_SOURCE`] (one module holds both paths).
pub fn source(storage: Storage) -> String {
    format!(
        "#define DTYPE {}\n#line 1 \"storage.cuh\"\n{STORAGE_CUH}\n{FAST_SOURCE}\n#line 1 \"ff_eager.cu\"\n{EAGER_SOURCE}",
        storage.code()
    )
}

/// The PTX for `storage` on `arch`, compiled on first use and cached for the process.
///
/// On sm_90 the program is compiled for sm_90a, whose arch-specific instructions (wgmma) the
/// fp16 refine of `cuda/fast/refine_wg.cu` runs on; every other kernel compiles as for sm_90.
pub fn ptx(storage: Storage, arch: &'static str) -> Result<Ptx, PluginError> {
    compile_ptx_cached("ff_fast", &source(storage), target(arch))
}

/// The architecture NVRTC compiles the program for on a device of `arch`: sm_90a on sm_90.
pub fn target(arch: &'static str) -> &'static str {
    if arch == "sm_90" { "sm_90a" } else { arch }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apex_plugin_api::cuda::nvrtc_for_test;

    /// The constants the host sizes grids and shared memory with are the source's `#define`s.
    #[test]
    fn the_host_constants_are_the_sources_defines() {
        let define = |name: &str| -> usize {
            let prefix = format!("#define {name} ");
            FAST_SOURCE
                .lines()
                .find_map(|line| line.strip_prefix(prefix.as_str()))
                .and_then(|value| value.trim().parse().ok())
                .unwrap_or_else(|| panic!("cuda/fast/*.cu has no numeric #define {name}"))
        };
        for (name, value) in [
            ("BASE_CHANNELS", BASE_CHANNELS),
            ("CHUNK", CHUNK),
            ("CB", CB),
            ("APPLY_PER_THREAD", APPLY_PER_THREAD),
            ("FC1_ROWS", FC1_ROWS),
            ("FC2_ROWS", FC2_ROWS),
            ("FILM_TOKENS", FILM_TOKENS),
            ("SCAN_MAP_CHANNELS", SCAN_MAP_CHANNELS),
            ("MAX_CLUSTER", MAX_CLUSTER),
            ("WARPS", WARPS),
            ("WG_PIX", WG_PIX),
            ("WG_LBO", WG_LBO),
            ("WG_SBO_PAD", WG_SBO_PAD),
        ] {
            assert_eq!(define(name), value, "{name}");
        }
    }

    /// The profile's two levels find their copies; any other shape runs the general kernel.
    #[test]
    fn only_the_compiled_shapes_have_a_lean_copy() {
        assert_eq!(lean_shape(128, 16), Some(0));
        assert_eq!(lean_shape(128, 8), Some(1));
        for (c, t) in [(128, 32), (128, 4), (64, 16), (16, 6), (144, 8)] {
            assert_eq!(lean_shape(c, t), None, "C = {c}, t = {t}");
        }
    }

    /// Each shape the lean refine is compiled for names an entry point the source defines for
    /// that shape.
    #[test]
    fn every_lean_shape_is_an_entry_point_of_its_shape() {
        for (c, t, name) in LEAN_SHAPES {
            let line = format!("LEAN_ENTRY({name}, {c}, {t})");
            assert!(
                FAST_SOURCE.lines().any(|l| l.trim() == line),
                "cuda/fast/refine_lean.cu has no line `{line}`"
            );
        }
    }

    /// The host launches the fast kernels as programmatic dependents (`device/fast.rs`), which
    /// is only sound where each waits for its predecessor before touching memory: every entry
    /// point's body opens with `FF_AFTER_PREDECESSOR` (after its timeline scope, which reads no
    /// buffer).
    #[test]
    fn every_fast_entry_point_waits_for_its_predecessor_first() {
        let entries: Vec<usize> = FAST_SOURCE
            .match_indices("__global__")
            .map(|(i, _)| i)
            .collect();
        assert!(entries.len() >= 12, "found {} entry points", entries.len());
        for (n, &at) in entries.iter().enumerate() {
            let end = entries.get(n + 1).copied().unwrap_or(FAST_SOURCE.len());
            let entry = &FAST_SOURCE[at..end];
            let name = entry.lines().next().unwrap_or_default();
            let body = entry.split_once(") {").map_or("", |(_, b)| b);
            let first = body
                .lines()
                .map(|l| l.trim().trim_end_matches('\\').trim())
                .find(|l| !l.is_empty() && !l.starts_with("FF_TL"));
            assert_eq!(
                first,
                Some("FF_AFTER_PREDECESSOR();"),
                "the entry point `{name}` does not wait for its predecessor first"
            );
        }
    }

    /// Every storage's source compiles for the H100's architecture (needs NVRTC, not a GPU).
    #[test]
    fn every_storage_compiles_when_nvrtc_is_present() {
        if !nvrtc_for_test() {
            return;
        }
        for s in [Storage::F32, Storage::F16, Storage::Bf16] {
            let ptx = ptx(s, "sm_90").unwrap_or_else(|e| panic!("{s:?}: {}", e.message));
            let text = ptx.to_src();
            for entry in [
                "ff_base",
                "ff_select",
                "ff_pack_s",
                "ff_pack_f",
                "ff_film_scan",
                "ff_film_fc1",
                "ff_film_out",
                "ff_film_fc1_one",
                "ff_film_out_one",
                "ff_refine",
                "ff_apply",
                "ff_refine_apply",
                "ff_refine_apply_lean",
                "ff_refine_apply_lean_c128_t16",
                "ff_refine_apply_lean_c128_t8",
                "e_gather",
                "e_pwconv",
                "e_fuse",
            ] {
                assert!(text.contains(entry), "{s:?} lacks {entry}");
            }
            // Every storage's pointwise GEMM runs on tensor cores; fp32's in TF32.
            assert!(text.contains("mma.sync"), "{s:?}");
            assert_eq!(text.contains(".tf32"), s == Storage::F32, "{s:?}");
            assert!(text.contains("barrier.cluster.wait"), "{s:?}");
            // The wgmma refine: fp16 only, the module compiled for sm_90a.
            let map_entries = WG_MAP_ENTRIES
                .iter()
                .flat_map(|m| m.refine.iter().chain(&m.scan));
            for entry in WG_SHAPES.iter().map(|(_, _, e)| e).chain(map_entries) {
                assert_eq!(text.contains(entry), s == Storage::F16, "{s:?} {entry}");
            }
            assert_eq!(text.contains("wgmma.mma_async"), s == Storage::F16, "{s:?}");
        }
    }

    #[test]
    fn sm_90_compiles_for_sm_90a_and_other_devices_for_themselves() {
        assert_eq!(target("sm_90"), "sm_90a");
        assert_eq!(target("sm_80"), "sm_80");
        assert_eq!(target("sm_100"), "sm_100");
    }

    #[test]
    fn the_wg_shapes_are_found_by_channels_and_tile() {
        assert_eq!(wg_shape(128, 16), Some(0));
        assert_eq!(wg_shape(128, 8), Some(1));
        assert_eq!(wg_shape(64, 16), None);
        assert_eq!(wg_shape(128, 32), None);
    }

    /// ptxas's report (sm_90a, what an sm_90 device runs) of the refine kernels and `ff_base` in
    /// every storage: no spills (a spill in these latency chains costs local-memory round trips
    /// in the GEMM), and the register counts that give `ff_refine_apply` and the wgmma refine two
    /// CTAs a SM, `ff_refine_apply_lean` three or four and `ff_base` four (65,536 registers a SM
    /// over 256 threads a CTA: at most 128, 80 or 64, in units of 8). The counts are NVRTC 13.0's
    /// (the GPU machine's CUDA; `pip install 'nvidia-cuda-nvrtc==13.0.*'`): NVRTC 13.5 spills 8
    /// bytes in bf16's `ff_refine_apply_lean_c128_t8` (thirty-sixth session), and the GPU runs
    /// what its own driver's NVRTC compiles.
    #[test]
    fn the_refine_and_base_kernels_fit_their_registers_without_spilling_when_nvrtc_is_present() {
        if !nvrtc_for_test() {
            return;
        }
        for s in [Storage::F32, Storage::F16, Storage::Bf16] {
            let log = ptxas_log(&source(s));
            // Four CTAs a SM (LEAN_MIN_BLOCKS); bf16 and fp32 three.
            let lean = if s == Storage::F16 { 64 } else { 80 };
            let shaped = LEAN_SHAPES.iter().map(|(_, _, name)| (*name, lean));
            let wg = WG_SHAPES
                .iter()
                .map(|(_, _, name)| *name)
                .chain(WG_MAP_ENTRIES.iter().flat_map(|m| m.refine))
                .filter(|_| s == Storage::F16)
                .map(|name| (name, 128));
            for (entry, max_registers) in [
                // Beside the levels a base block holds one lean CTA's registers, not two.
                ("ff_base", 64),
                ("ff_refine", 255),
                ("ff_refine_apply", 128),
                ("ff_refine_apply_lean", lean),
            ]
            .into_iter()
            .chain(shaped)
            .chain(wg)
            {
                let (registers, spills) = ptxas_entry(&log, entry)
                    .unwrap_or_else(|| panic!("{s:?}: no ptxas report of {entry}:\n{log}"));
                assert!(
                    spills == (0, 0),
                    "{s:?} {entry}: {} bytes spill stores, {} bytes spill loads",
                    spills.0,
                    spills.1
                );
                assert!(
                    registers <= max_registers,
                    "{s:?} {entry}: {registers} registers, more than {max_registers}"
                );
            }
        }
    }

    /// ptxas's report of `source` for sm_90 (compiled for sm_90a: `target`).
    fn ptxas_log(source: &str) -> String {
        apex_plugin_api::cuda::ptxas_report("ff_fast", source, target("sm_90"))
            .unwrap_or_else(|e| panic!("{}", e.message))
    }

    /// From ptxas's report, `entry`'s registers and (spill store, spill load) bytes.
    fn ptxas_entry(log: &str, entry: &str) -> Option<(u32, (u32, u32))> {
        let head = format!("Compiling entry function '{entry}'");
        let section = log
            .split("ptxas info    : ")
            .skip_while(|l| !l.starts_with(&head));
        let mut registers = None;
        let mut spills = None;
        for (i, part) in section.enumerate() {
            if i > 0 && part.starts_with("Compiling entry function") {
                break;
            }
            let number_before = |text: &str, unit: &str| -> Option<u32> {
                let end = text.find(unit)?;
                text[..end].split_whitespace().last()?.parse().ok()
            };
            if let Some(r) = part
                .strip_prefix("Used ")
                .and_then(|p| number_before(p, " registers"))
            {
                registers = Some(r);
            }
            if part.starts_with(&format!("Function properties for {entry}\n")) {
                spills = Some((
                    number_before(part, " bytes spill stores")?,
                    number_before(part, " bytes spill loads")?,
                ));
            }
        }
        Some((registers?, spills?))
    }

    /// Below sm_90 (no thread-block clusters) the source still compiles, without the fused
    /// refine kernel; the device state then runs every level split.
    #[test]
    fn sm_80_compiles_without_the_cluster_kernel_when_nvrtc_is_present() {
        if !nvrtc_for_test() {
            return;
        }
        for s in [Storage::F32, Storage::F16, Storage::Bf16] {
            let ptx = ptx(s, "sm_80").unwrap_or_else(|e| panic!("{s:?}: {}", e.message));
            let text = ptx.to_src();
            assert!(
                text.contains("ff_refine") && !text.contains("ff_refine_apply"),
                "{s:?}"
            );
        }
    }
}
