//! CUDA source assembly: plugin-api's storage header (the storage type and its conversions), the
//! shared device header (16-byte vectors) plus one op's kernels, specialised by `#define`s for one
//! shape and precision, so every index division is by a compile-time constant and the launch grid
//! follows from the same numbers.

use apex_plugin_api::Precision;
use apex_plugin_api::cuda::specialised_source;

/// The device header shared by every op.
pub const COMMON: &str = include_str!("cuda/common.cuh");

/// Elements per vector access: 16 bytes where the row `granularity` (in elements) allows it, so
/// a vector never straddles two tiles or cells.
pub fn vec_elems(precision: Precision, granularity: usize) -> usize {
    let max = 16 / precision.size_bytes();
    let pow2 = 1usize << granularity.trailing_zeros();
    max.min(pow2)
}

/// The program of one op's `body` for `precision` and `defines`: plugin-api's
/// [`specialised_source`] with the common header, then `body`.
pub fn assemble(precision: Precision, defines: &[(&str, usize)], body: &str) -> String {
    specialised_source(precision, defines, &[COMMON, body])
        .unwrap_or_else(|| unreachable!("the tile ops do not declare {precision:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_16_bytes_unless_the_row_is_shorter() {
        assert_eq!(vec_elems(Precision::Fp16, 8), 8);
        assert_eq!(vec_elems(Precision::Fp32, 8), 4);
        assert_eq!(vec_elems(Precision::Fp16, 4), 4);
        assert_eq!(vec_elems(Precision::Bf16, 256), 8);
        assert_eq!(vec_elems(Precision::Fp32, 2), 2);
    }
}
