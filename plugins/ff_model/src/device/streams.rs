//! The fast path's concurrency inside one call: the side streams it forks onto after
//! `ff_select` and joins back before the call ends, so that a batch's independent frames overlap
//! (the batch in runs of frames, each run's two levels on a stream of its own) and the base pass
//! runs beside them (on the background stream). A fork is an event the side streams wait for, a
//! join an event per side stream the host's stream waits for: both are captured as graph edges,
//! so the frames of a batch still form one CUDA graph, and the host's timing events on its own
//! stream cover every kernel.

use std::sync::Arc;

use apex_plugin_api::{PluginError, cuda::cuda_error};
use cudarc::driver::{CudaEvent, CudaStream, sys::CUevent_flags};

/// A run of consecutive batch entries `[b0, b0 + n)`: what one stream computes of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frames {
    pub b0: usize,
    pub n: usize,
}

/// `batch` frames in `runs` runs (at least one, at most `batch`) as even as possible, the longer
/// ones first.
pub fn split_batch(batch: usize, runs: usize) -> Vec<Frames> {
    let runs = runs.clamp(1, batch.max(1));
    let (per, extra) = (batch / runs, batch % runs);
    let mut b0 = 0;
    (0..runs)
        .map(|i| {
            let n = per + usize::from(i < extra);
            let frames = Frames { b0, n };
            b0 += n;
            frames
        })
        .collect()
}

/// Frames a run takes, about: a batch runs in `ceil(batch / RUN_FRAMES)` runs.
///
/// Measured on an H100 (2026-11-27, `benches/results/README.md`, nineteenth session, call 6),
/// in-process bench against other run lengths in the same call: B=4 125.5 us in runs of 2+2
/// against 129.0 in one run; B=8 201.1-201.5 in 3+3+2 against 204.0-204.2 in 4+4 and 202.9-203.3
/// in 3+3+1+1; B=16 351.7-352.9 in 3+3+3+3+2+2 against 359.8-361.2 in four runs of four, 357-358
/// in five runs and 366.7-366.9 in three; runs of one frame lose (B=8: 222 us in eight runs,
/// seventeenth session). With the twenty-first session's lean refine (call 5): B=8 186.0-186.4 us
/// in 3+3+2 against 192.1-192.4 in 2+2+2+2 and 187.7-188.0 in 4+4; B=16 329.2-330.1 against
/// 345.1-345.9 in runs of two and 334.1-334.3 in runs of four. A reading, not measured: more
/// runs overlap more of the levels' latency-bound launches, until each run's launches cost more
/// than the overlap saves.
///
/// Runs are then at most three frames, so a FiLM linear block (`FILM_TOKENS` = 4 frames of its
/// run) always has a slot to spare; the earlier rule kept runs at `FILM_TOKENS` frames or more
/// for that reason, and the measurements above include the spare slot.
pub const RUN_FRAMES: usize = 3;

/// The runs of frames a call of `batch` frames computes concurrently: runs of about
/// [`RUN_FRAMES`] frames (B=8: 3+3+2).
pub fn runs(batch: usize) -> Vec<Frames> {
    split_batch(batch, batch.div_ceil(RUN_FRAMES))
}

/// A call's runs of frames and the streams they run on: run 0 on the host's stream, run `i`
/// on side stream `i - 1`, with the events that fork the side streams from the host's stream and
/// join them back; and the background stream beside them, where `ff_base` runs.
///
/// The base pass (heavy = dense, detail = 0 outside the refines' tiles: ~9 MB a frame) runs on the
/// background stream in one block per `BASE_BANDS_PER_BLOCK` bands, its vectors streaming
/// (evict-first), so that it moves its bytes beside the levels at a fraction of DRAM's rate without
/// evicting theirs from L2. Against one block a band on the host's stream before run 0's levels
/// (H100, twenty-third session, call 4 of `benches/results/device_scripts_2026-11-27_s23.sh`),
/// apex-host, alternating, two rounds: B=8 170.2-170.6 us against 180.2-181.0, the profile
/// 60.6-60.8 against 61.6-61.9, 256x256 77.2-77.3 against 92.7, fp32 133.2 against 140.1-140.8,
/// bf16 64.0 against 65.5, but tiles 32/16 115.9 against 112.5-112.8 (in process 112.9-113.0
/// against 113.0-113.3: the two harnesses disagree on that shape, not yet explained). Bands a
/// block, in process, without the streaming hints (B=8 / B=16 / 256x256 µs): 4: 178.7 / 326 / 87.2;
/// 8: 181.3 / 315 / 83.1; 16: 172.9 / 310 / 82.0; 32: 176.7 / 316 / 124.2 (the profile 57.5-58.3
/// throughout). Too few blocks and the base outlasts the levels; each block also takes the
/// registers of one lean refine CTA on its SM (the lean CTAs fill the register file four at a time;
/// unbounded, the base's 99 registers took two), so too many slow the refines. The full grid beside
/// the levels lost for that reason (seventeenth and twenty-second sessions).
pub struct Runs {
    frames: Vec<Frames>,
    side: Vec<Arc<CudaStream>>,
    forked: CudaEvent,
    joined: Vec<CudaEvent>,
    /// The stream beside the runs, for `ff_base`, and its join event.
    background: (Arc<CudaStream>, CudaEvent),
}

impl Runs {
    /// `frames` (at least one run), with a side stream of `main`'s context for each run past the
    /// first, and the background stream (the eager path, which launches on `main` only, never
    /// forks it).
    pub fn new(main: &Arc<CudaStream>, frames: Vec<Frames>) -> Result<Self, PluginError> {
        let sides = frames.len().saturating_sub(1);
        let ctx = main.context();
        let event = || {
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
                .map_err(cuda_error)
        };
        Ok(Self {
            frames,
            side: (0..sides)
                .map(|_| main.fork().map_err(cuda_error))
                .collect::<Result<_, _>>()?,
            forked: event()?,
            joined: (0..sides).map(|_| event()).collect::<Result<_, _>>()?,
            background: (main.fork().map_err(cuda_error)?, event()?),
        })
    }

    /// The runs of frames.
    pub fn count(&self) -> usize {
        self.frames.len()
    }

    /// Each run with the stream it runs on (`main`, the host's, for the first).
    pub fn streams<'a>(
        &'a self,
        main: &'a Arc<CudaStream>,
    ) -> impl Iterator<Item = (&'a Arc<CudaStream>, Frames)> + 'a {
        std::iter::once(main)
            .chain(&self.side)
            .zip(self.frames.iter().copied())
    }

    /// Every side stream (and the background one, with `background`) starts after the work
    /// enqueued on `main` so far.
    pub fn fork(&self, main: &CudaStream, background: bool) -> Result<(), PluginError> {
        if self.side.is_empty() && !background {
            return Ok(());
        }
        self.forked.record(main).map_err(cuda_error)?;
        let bg = background.then_some(&self.background.0);
        for side in self.side.iter().chain(bg) {
            side.wait(&self.forked).map_err(cuda_error)?;
        }
        Ok(())
    }

    /// The background stream (forked and joined only with `background`).
    pub fn background(&self) -> &Arc<CudaStream> {
        &self.background.0
    }

    /// `main`'s later work starts after everything enqueued on the side streams (and the
    /// background one, with `background`).
    pub fn join(&self, main: &CudaStream, background: bool) -> Result<(), PluginError> {
        let bg = background.then_some((&self.background.0, &self.background.1));
        for (side, joined) in self.side.iter().zip(&self.joined).chain(bg) {
            joined.record(side).map_err(cuda_error)?;
            main.wait(joined).map_err(cuda_error)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_run_in_runs_of_about_three_frames() {
        let plan = |b| runs(b).iter().map(|f| f.n).collect::<Vec<_>>();
        assert_eq!(plan(1), [1]);
        assert_eq!(plan(3), [3]);
        assert_eq!(plan(4), [2, 2]);
        assert_eq!(plan(8), [3, 3, 2]);
        assert_eq!(plan(11), [3, 3, 3, 2]);
        assert_eq!(plan(16), [3, 3, 3, 3, 2, 2]);
    }

    #[test]
    fn a_batch_splits_into_even_consecutive_runs() {
        let runs = |b, r| {
            split_batch(b, r)
                .iter()
                .map(|f| (f.b0, f.n))
                .collect::<Vec<_>>()
        };
        assert_eq!(runs(8, 2), [(0, 4), (4, 4)]);
        assert_eq!(runs(8, 3), [(0, 3), (3, 3), (6, 2)]);
        assert_eq!(runs(3, 2), [(0, 2), (2, 1)]);
        // Never more runs than frames, never none.
        assert_eq!(runs(1, 4), [(0, 1)]);
        assert_eq!(runs(5, 0), [(0, 5)]);
    }
}
