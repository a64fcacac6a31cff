//! The Hilbert order of tile ids (`spec/apex-x-kernels.md` §1.1.1): the classic `xy2d` with
//! `x` = the tile column and `y` = the tile row, rotating with `s` as the original does, on the
//! smallest power-of-two square holding the grid. Ids are row-major, `id = ty * gw + tx`.

/// The Hilbert distance of tile `(tx, ty)` on an `n x n` square (`n` a power of two).
pub fn distance(tx: usize, ty: usize, n: usize) -> u64 {
    let (mut x, mut y) = (tx as i64, ty as i64);
    let mut d: i64 = 0;
    let mut s = (n / 2) as i64;
    while s > 0 {
        let rx = i64::from((x & s) > 0);
        let ry = i64::from((y & s) > 0);
        d += s * s * ((3 * rx) ^ ry);
        if ry == 0 {
            if rx == 1 {
                x = s - 1 - x;
                y = s - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s /= 2;
    }
    d as u64
}

/// The side of the Hilbert square of a `gh x gw` grid: the next power of two ≥ `max(gh, gw)`.
pub fn side(gh: usize, gw: usize) -> usize {
    gh.max(gw).max(1).next_power_of_two()
}

/// `ids` (row-major on a `gh x gw` grid, each `< gh*gw`) sorted by Hilbert distance, ties (equal
/// ids) keeping their input order, as the original's stable sort does.
pub fn order(ids: &mut [usize], gh: usize, gw: usize) {
    let n = side(gh, gw);
    ids.sort_by_key(|&id| distance(id % gw, id / gw, n));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(g: usize) -> Vec<usize> {
        let mut ids: Vec<usize> = (0..g * g).collect();
        order(&mut ids, g, g);
        ids
    }

    #[test]
    fn full_orders_match_the_original_fixtures() {
        assert_eq!(full(2), [0, 2, 3, 1]);
        assert_eq!(
            full(4),
            [0, 1, 5, 4, 8, 12, 13, 9, 10, 14, 15, 11, 7, 6, 2, 3]
        );
        assert_eq!(
            full(8)[..16],
            [0, 8, 9, 1, 2, 3, 11, 10, 18, 19, 27, 26, 25, 17, 16, 24]
        );
    }

    #[test]
    fn the_distance_is_a_bijection_and_neighbours_touch() {
        for n in [1, 2, 4, 8, 16, 32, 64] {
            let mut seen = vec![false; n * n];
            let mut by_d = vec![(0, 0); n * n];
            for ty in 0..n {
                for tx in 0..n {
                    let d = distance(tx, ty, n) as usize;
                    assert!(!seen[d], "n={n} d={d} twice");
                    seen[d] = true;
                    by_d[d] = (tx as i64, ty as i64);
                }
            }
            for w in by_d.windows(2) {
                let step = (w[0].0 - w[1].0).abs() + (w[0].1 - w[1].1).abs();
                assert_eq!(step, 1, "n={n}: consecutive cells must be adjacent");
            }
        }
    }

    #[test]
    fn non_square_grids_sort_the_existing_tiles() {
        // A 2x4 grid lies in the 4x4 square; its tiles keep the square's relative order.
        let mut ids: Vec<usize> = (0..8).collect();
        order(&mut ids, 2, 4);
        let square = full(4);
        let expect: Vec<usize> = square
            .iter()
            .filter(|&&id| id / 4 < 2)
            .map(|&id| (id / 4) * 4 + id % 4)
            .collect();
        assert_eq!(ids, expect);
    }
}
