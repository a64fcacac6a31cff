//! The CPU path of `nn_ops.cross_entropy`: each task of rows' losses (and, with `grad`, their
//! gradients in place), vectorised by [`simd_dispatch`].

use crate::fast_math::{exp_f32, ln_f32, max_f32, simd_dispatch};

use super::is_class;

simd_dispatch!(
    /// The losses of `rows` (`vocab` logits each, `targets` one per row): the sum over counted
    /// rows and how many were counted; with `grad`, each row is overwritten with its gradient of
    /// the mean loss (zeros for an ignored row). One call per task of rows, so short rows
    /// (vocab 8) do not pay the dispatch per row.
    pub(super) fn rows_loss(rows: &mut [f32], vocab: usize, targets: &[i64], inv_n: f32, grad: bool) -> (f64, usize) => rows_loss_portable
);

/// Rows per group of [`rows_loss_portable`]: their sums of exponentials wait in an array so that
/// one vector loop takes all their logarithms.
const LN_GROUP: usize = 64;

#[inline(always)]
fn rows_loss_portable(
    rows: &mut [f32],
    vocab: usize,
    targets: &[i64],
    inv_n: f32,
    grad: bool,
) -> (f64, usize) {
    let (mut sum, mut count) = (0.0f64, 0usize);
    for (group, tg) in rows
        .chunks_mut(LN_GROUP * vocab)
        .zip(targets.chunks(LN_GROUP))
    {
        // Each row's maximum and sum of exponentials, then every logsumexp of the group in
        // one loop (short rows would otherwise pay a scalar libm `ln` per row).
        let (mut lse, mut sums) = ([0.0f32; LN_GROUP], [1.0f32; LN_GROUP]);
        for ((row, m), s) in group.chunks_exact(vocab).zip(&mut lse).zip(&mut sums) {
            *m = max_f32(row);
            *s = sum_exp(row, *m);
        }
        for (m, &s) in lse.iter_mut().zip(&sums) {
            *m += ln_f32(s);
        }
        for ((row, &t), &lse) in group.chunks_exact_mut(vocab).zip(tg).zip(&lse) {
            let counted = is_class(t, vocab);
            if counted {
                sum += f64::from(lse - row[t as usize]);
                count += 1;
            }
            if grad {
                if counted {
                    row_grad(row, t as usize, lse, inv_n);
                } else {
                    row.fill(0.0);
                }
            }
        }
    }
    (sum, count)
}

/// `sum(exp(row - m))`, at least 1 when `m` is the row's maximum: the exponentials summed in
/// sixteen lanes (one AVX-512 vector; 16 lanes ran vocab 512 1.5x faster than 8 on the Zen 4
/// dev machine), or in eight for rows shorter than sixteen (a vocab-8 row stays one vector).
#[inline(always)]
fn sum_exp(row: &[f32], m: f32) -> f32 {
    if row.len() >= 16 {
        sum_exp_lanes::<16>(row, m)
    } else {
        sum_exp_lanes::<8>(row, m)
    }
}

#[inline(always)]
fn sum_exp_lanes<const N: usize>(row: &[f32], m: f32) -> f32 {
    let mut acc = [0.0f32; N];
    let mut chunks = row.chunks_exact(N);
    for c in &mut chunks {
        for (a, &xv) in acc.iter_mut().zip(c) {
            *a += exp_f32(xv - m);
        }
    }
    acc.iter().sum::<f32>()
        + chunks
            .remainder()
            .iter()
            .map(|&xv| exp_f32(xv - m))
            .sum::<f32>()
}

/// Overwrites `row` (logits) with the gradient of the mean loss: `softmax * inv_n`, minus
/// `inv_n` at the target `t`.
#[inline(always)]
fn row_grad(row: &mut [f32], t: usize, lse: f32, inv_n: f32) {
    let p_t = exp_f32(row[t] - lse);
    for xv in row.iter_mut() {
        *xv = exp_f32(*xv - lse) * inv_n;
    }
    row[t] = p_t.mul_add(inv_n, -inv_n);
}
