//! [`FfInputs`]: one call's inputs drawn from a seed (`spec/apex-x-kernels.md` §2.2):
//! `dense [B,C,H,W]` standard normal, `utilities` and `split_utilities [B,G0]` standard normal
//! (`G0` = the L0 tiles), `boundary` and `uncertainty [B,1,H,W]` uniform in `[0, 1)`; fp32.

use apex_tile_math::rng::Rng;
use rayon::prelude::*;

use crate::{problem::FfProblem, storage::Storage};

#[derive(Debug, Clone, PartialEq)]
pub struct FfInputs {
    pub dense: Vec<f32>,
    pub utilities: Vec<f32>,
    pub split_utilities: Vec<f32>,
    pub boundary: Vec<f32>,
    pub uncertainty: Vec<f32>,
}

/// The stream of input `i` (the weights use another).
const STREAM: u64 = 0xFF_1000;
/// Values per parallel chunk of the dense map: each chunk has its own stream, so the draw does
/// not depend on the thread count.
const CHUNK: usize = 1 << 15;

fn normal(len: usize, seed: u64, stream: u64) -> Vec<f32> {
    let mut out = vec![0.0f32; len];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut rng = Rng::new(seed, stream.wrapping_add((i as u64) << 20));
            for v in chunk {
                *v = rng.normal() as f32;
            }
        });
    out
}

fn unit(len: usize, seed: u64, stream: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed, stream);
    (0..len).map(|_| rng.unit() as f32).collect()
}

impl FfInputs {
    pub fn generate(problem: &FfProblem, seed: u64) -> Self {
        let tiles = problem.batch * problem.grid_l0().tiles();
        Self {
            dense: normal(problem.map_len(), seed, STREAM),
            utilities: normal(tiles, seed, STREAM + 1),
            split_utilities: normal(tiles, seed, STREAM + 2),
            boundary: unit(problem.pixels(), seed, STREAM + 3),
            uncertainty: unit(problem.pixels(), seed, STREAM + 4),
        }
    }

    /// The inputs drawn from `seed`, each value rounded to `storage` (what a CUDA case stores and
    /// the f64 reference then reads exactly; fp32 leaves them as drawn).
    pub fn generate_for(problem: &FfProblem, seed: u64, storage: Storage) -> Self {
        let mut inputs = Self::generate(problem, seed);
        for v in [
            &mut inputs.dense,
            &mut inputs.utilities,
            &mut inputs.split_utilities,
            &mut inputs.boundary,
            &mut inputs.uncertainty,
        ] {
            storage.round_all(v);
        }
        inputs
    }
}
