//! CUDA source assembly: the shared device header (storage type, conversions, 16-byte vectors)
//! plus one op's kernels, specialised by `#define`s for one shape and precision, so every index
//! division is by a compile-time constant and the launch grid follows from the same numbers.

use apex_plugin_api::Precision;

/// The device header shared by every op.
pub const COMMON: &str = include_str!("cuda/common.cuh");

/// Elements per vector access: 16 bytes where the row `granularity` (in elements) allows it, so
/// a vector never straddles two tiles or cells.
pub fn vec_elems(precision: Precision, granularity: usize) -> usize {
    let max = 16 / precision.size_bytes();
    let pow2 = 1usize << granularity.trailing_zeros();
    max.min(pow2)
}

/// `DTYPE`: 0 = fp32, 1 = fp16, 2 = bf16 (fp16/bf16 are raw `unsigned short` bits on the device).
pub fn dtype_code(precision: Precision) -> usize {
    match precision {
        Precision::Fp32 => 0,
        Precision::Fp16 => 1,
        Precision::Bf16 => 2,
        Precision::Fp8 => unreachable!("tile ops do not declare fp8"),
    }
}

/// `#define NAME VALUEu` lines (unsigned, so constant products stay in 32-bit unsigned range),
/// then the common header, then `body`.
pub fn assemble(precision: Precision, defines: &[(&str, usize)], body: &str) -> String {
    let mut s = format!("#define DTYPE {}\n", dtype_code(precision));
    for (name, value) in defines {
        s.push_str(&format!("#define {name} {value}u\n"));
    }
    s.push_str(COMMON);
    s.push('\n');
    s.push_str(body);
    s
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
