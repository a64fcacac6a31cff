//! The greedy budgeted tile selection and its two-stage form (`spec/apex-x-kernels.md` §1.1.2),
//! computed in f64 on the host by every backend, so every backend selects the same tiles.

use std::cmp::Ordering;

use crate::hilbert;

/// The slack the original allows on a budget: a tile fits when `spent + cost <= budget + SLACK`.
pub const SLACK: f64 = 1e-9;
/// The smallest cost a score divides by.
const MIN_COST: f64 = 1e-9;

/// What [`greedy`] selected.
#[derive(Debug, Clone, PartialEq)]
pub struct Greedy {
    /// Selected ids in score order (score descending, id ascending), not spatial order.
    pub ids: Vec<usize>,
    /// The sum of the selected tiles' costs, accumulated in selection order.
    pub spent: f64,
}

/// Ids sorted by `score = value / max(cost, 1e-9)` descending, then id ascending.
fn by_score(ids: &mut [usize], value: impl Fn(usize) -> f64, cost: impl Fn(usize) -> f64) {
    let score = |i: usize| value(i) / cost(i).max(MIN_COST);
    ids.sort_by(|&a, &b| {
        score(b)
            .partial_cmp(&score(a))
            .unwrap_or(Ordering::Equal)
            .then(a.cmp(&b))
    });
}

/// `deterministic_greedy_selection`: walk the tiles by score and take each one whose cost still
/// fits the budget, until `kmax` are taken. A tile that does not fit does not stop the walk.
/// `utilities`, `costs` and `budget` must be finite (the caller validates them).
pub fn greedy(utilities: &[f64], costs: &[f64], budget: f64, kmax: usize) -> Greedy {
    let mut order: Vec<usize> = (0..utilities.len()).collect();
    by_score(&mut order, |i| utilities[i], |i| costs[i]);
    let mut out = Greedy {
        ids: Vec::new(),
        spent: 0.0,
    };
    for i in order {
        if out.ids.len() >= kmax {
            break;
        }
        if out.spent + costs[i] <= budget + SLACK {
            out.spent += costs[i];
            out.ids.push(i);
        }
    }
    out
}

/// The budgets and caps of a two-stage selection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoStageConfig {
    /// `b1`: the L0 budget, spent on `delta_cost` per tile.
    pub budget_b1: f64,
    /// `b2`: the split budget, spent on `split_overhead` per split parent.
    pub budget_b2: f64,
    pub kmax_l0: usize,
    pub kmax_l1: usize,
}

/// What [`two_stage`] selected.
#[derive(Debug, Clone, PartialEq)]
pub struct TwoStage {
    /// L0 ids on the `gh x gw` grid, in score order.
    pub l0: Vec<usize>,
    /// L1 ids on the `2gh x 2gw` grid, in Hilbert order.
    pub l1: Vec<usize>,
    pub spent_b1: f64,
    pub spent_b2: f64,
}

/// `deterministic_two_stage_selection` at nesting depth 1: stage 1 is [`greedy`] with `b1` and
/// `kmax_l0`; stage 2 walks the selected L0 tiles by `split_utility / split_overhead` and splits
/// each parent that fits `b2` and keeps the L1 count within `kmax_l1` into its four children
/// `(2ty, 2tx), (2ty, 2tx+1), (2ty+1, 2tx), (2ty+1, 2tx+1)`; the children are put in Hilbert order.
#[allow(clippy::too_many_arguments)]
pub fn two_stage(
    utilities: &[f64],
    delta_costs: &[f64],
    split_utilities: &[f64],
    split_overheads: &[f64],
    config: &TwoStageConfig,
    gh: usize,
    gw: usize,
) -> TwoStage {
    let stage1 = greedy(utilities, delta_costs, config.budget_b1, config.kmax_l0);
    let mut out = TwoStage {
        l0: stage1.ids,
        l1: Vec::new(),
        spent_b1: stage1.spent,
        spent_b2: 0.0,
    };
    if out.l0.is_empty() || config.kmax_l1 == 0 || config.budget_b2 == 0.0 {
        return out;
    }
    let mut parents = out.l0.clone();
    by_score(&mut parents, |i| split_utilities[i], |i| split_overheads[i]);
    let l1_w = 2 * gw;
    for p in parents {
        let cost = split_overheads[p];
        if out.spent_b2 + cost > config.budget_b2 + SLACK || out.l1.len() + 4 > config.kmax_l1 {
            continue;
        }
        out.spent_b2 += cost;
        let (ty, tx) = (p / gw, p % gw);
        for (dy, dx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            out.l1.push((2 * ty + dy) * l1_w + 2 * tx + dx);
        }
    }
    hilbert::order(&mut out.l1, 2 * gh, l1_w);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_walks_past_a_tile_that_does_not_fit() {
        // Scores: id0 = 10/5 = 2, id1 = 3/1 = 3, id2 = 1/1 = 1. Budget 2: id1 (1), id0 (5) does
        // not fit, id2 (1) does.
        let g = greedy(&[10.0, 3.0, 1.0], &[5.0, 1.0, 1.0], 2.0, 8);
        assert_eq!(g.ids, [1, 2]);
        assert_eq!(g.spent, 2.0);
    }

    #[test]
    fn greedy_breaks_score_ties_by_id_and_stops_at_kmax() {
        let g = greedy(&[1.0, 2.0, 2.0, 2.0], &[1.0; 4], 10.0, 2);
        assert_eq!(g.ids, [1, 2]);
        // Negative utilities are taken too: there is no threshold.
        let g = greedy(&[-1.0, -2.0], &[1.0, 1.0], 10.0, 8);
        assert_eq!(g.ids, [0, 1]);
        assert!(greedy(&[1.0], &[1.0], 0.5, 8).ids.is_empty());
    }

    #[test]
    fn the_fixed_profile_takes_20_l0_tiles_and_splits_8() {
        // §1.1.3: 64 L0 tiles, delta cost 0.8, b1 = 16, b2 = 8, kmax 32 / 64, overheads 1.
        let u: Vec<f64> = (0..64)
            .map(|i| ((i * 37) % 64) as f64 * 0.1 - 3.0)
            .collect();
        let s: Vec<f64> = (0..64).map(|i| ((i * 11) % 64) as f64).collect();
        let cfg = TwoStageConfig {
            budget_b1: 16.0,
            budget_b2: 8.0,
            kmax_l0: 32,
            kmax_l1: 64,
        };
        let t = two_stage(&u, &[0.8; 64], &s, &[1.0; 64], &cfg, 8, 8);
        assert_eq!(t.l0.len(), 20);
        assert_eq!(t.spent_b1, 16.000000000000004);
        assert_eq!(t.l1.len(), 32);
        assert_eq!(t.spent_b2, 8.0);
        // The 20 highest utilities, highest first.
        let mut best: Vec<usize> = (0..64).collect();
        best.sort_by(|&a, &b| u[b].partial_cmp(&u[a]).unwrap().then(a.cmp(&b)));
        assert_eq!(t.l0, best[..20]);
        // Every L1 id is a child of a selected L0 tile, and they come in Hilbert order.
        for &c in &t.l1 {
            let parent = (c / 16 / 2) * 8 + (c % 16) / 2;
            assert!(t.l0.contains(&parent));
        }
        let mut sorted = t.l1.clone();
        hilbert::order(&mut sorted, 16, 16);
        assert_eq!(t.l1, sorted);
    }

    #[test]
    fn stage_two_skips_parents_that_would_pass_kmax_or_the_budget() {
        let cfg = TwoStageConfig {
            budget_b1: 10.0,
            budget_b2: 2.5,
            kmax_l0: 4,
            kmax_l1: 8,
        };
        // 2x2 L0 grid; split scores: id3 = 4/2 = 2, id0 = 3/1 = 3, id1 = 1/1, id2 = 0.5/1.
        let t = two_stage(
            &[4.0, 3.0, 2.0, 1.0],
            &[1.0; 4],
            &[3.0, 1.0, 0.5, 4.0],
            &[1.0, 1.0, 1.0, 2.0],
            &cfg,
            2,
            2,
        );
        assert_eq!(t.l0, [0, 1, 2, 3]);
        // id0 (cost 1), id3 (cost 2) exceeds 2.5, id1 (cost 1) fits, then kmax_l1 = 8 is full.
        assert_eq!(t.spent_b2, 2.0);
        let mut l1 = t.l1.clone();
        l1.sort_unstable();
        assert_eq!(l1, [0, 1, 2, 3, 4, 5, 6, 7]);
        let empty = two_stage(
            &[1.0],
            &[1.0],
            &[1.0],
            &[1.0],
            &TwoStageConfig {
                budget_b2: 0.0,
                ..cfg
            },
            1,
            1,
        );
        assert_eq!((empty.l0.len(), empty.l1.len()), (1, 0));
    }
}
