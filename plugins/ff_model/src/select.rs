//! The frame's tile selection (`spec/apex-x-kernels.md` §2.3 step 2): the two-stage greedy
//! selection of `apex-tile-math` on one batch entry's utilities, with the config's uniform costs,
//! then the L0 ids put in Hilbert order as the heavy path's pack does. Every backend calls this
//! same function in f64, so every backend works on the same tiles.

use apex_plugin_api::PluginError;
use apex_tile_math::{hilbert, selection};

use crate::{
    inputs::FfInputs,
    problem::{COST_CHEAP, COST_HEAVY, FfProblem, SPLIT_OVERHEAD},
};

/// One frame's selection.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameSelection {
    /// L0 ids in score order (what the selection returns).
    pub l0_scored: Vec<usize>,
    /// The same ids in Hilbert order on the L0 grid: the order the L0 path packs them in.
    pub l0: Vec<usize>,
    /// L1 ids in Hilbert order on the L1 grid.
    pub l1: Vec<usize>,
    pub spent_b1: f64,
    pub spent_b2: f64,
}

/// The selection of batch entry `b`. Non-finite utilities are refused, as the original's
/// validation does.
pub fn select(
    problem: &FfProblem,
    inputs: &FfInputs,
    b: usize,
) -> Result<FrameSelection, PluginError> {
    let grid = problem.grid_l0();
    let g = grid.tiles();
    let row = |v: &[f32], name: &str| -> Result<Vec<f64>, PluginError> {
        let r: Vec<f64> = v[b * g..(b + 1) * g]
            .iter()
            .map(|&x| f64::from(x))
            .collect();
        if let Some(i) = r.iter().position(|x| !x.is_finite()) {
            return Err(PluginError::invalid(format!(
                "{name}[{b}, {i}] = {} is not finite (hint: utilities must be finite numbers)",
                r[i]
            )));
        }
        Ok(r)
    };
    let utilities = row(&inputs.utilities, "utilities")?;
    let split = row(&inputs.split_utilities, "split_utilities")?;
    let t = selection::two_stage(
        &utilities,
        &vec![COST_HEAVY - COST_CHEAP; g],
        &split,
        &vec![SPLIT_OVERHEAD; g],
        &problem.selection_config(),
        grid.gh(),
        grid.gw(),
    );
    let mut l0 = t.l0.clone();
    hilbert::order(&mut l0, grid.gh(), grid.gw());
    Ok(FrameSelection {
        l0_scored: t.l0,
        l0,
        l1: t.l1,
        spent_b1: t.spent_b1,
        spent_b2: t.spent_b2,
    })
}
