//! [`Element`]: the storage types a plugin's CPU path computes in (fp32, fp16, bf16) and their
//! conversions, for plugins (feature `element`; not part of the ABI). One copy for every plugin, so
//! their CPU paths round alike; the bf16 rounding is the integer recipe their CUDA kernels use.
//!
//! Every op computes in f32 (its reference in f64) and rounds once when it stores; the slice
//! conversions are the vectorizable path (`half` uses F16C when the CPU has it), so inner loops
//! convert a row at a time.

use crate::Precision;
use half::{bf16, f16, slice::HalfFloatSliceExt};

/// A storage element type.
pub trait Element: Copy + Send + Sync + Default + PartialEq + std::fmt::Debug + 'static {
    const PRECISION: Precision;
    /// The NaN used to poison outputs.
    const POISON: Self;
    const ZERO: Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    /// Converts `src` into `dst[..src.len()]`.
    fn load(src: &[Self], dst: &mut [f32]);
    /// Rounds `src` into `dst[..src.len()]`.
    fn store(src: &[f32], dst: &mut [Self]);
    /// The raw bits, for bit-exact comparisons.
    fn bits(self) -> u32;
    /// One unit in the last place of this type at `|v|`: the gap from `|v|` rounded to this type
    /// to the next larger value (in the subnormal range, the subnormal step).
    fn ulp(v: f64) -> f64;
    /// The slice itself when this type is f32 (no conversion needed), else `None`.
    fn as_f32(s: &[Self]) -> Option<&[f32]> {
        let _ = s;
        None
    }
    /// The slice itself, writable, when this type is f32, else `None`.
    fn as_f32_mut(s: &mut [Self]) -> Option<&mut [f32]> {
        let _ = s;
        None
    }
}

/// `next - value` in f64, or infinity when `value` is not finite.
fn gap(value: f64, next: f64) -> f64 {
    if value.is_finite() {
        next - value
    } else {
        f64::INFINITY
    }
}

impl Element for f32 {
    const PRECISION: Precision = Precision::Fp32;
    const POISON: Self = f32::NAN;
    const ZERO: Self = 0.0;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn load(src: &[Self], dst: &mut [f32]) {
        dst[..src.len()].copy_from_slice(src);
    }
    fn store(src: &[f32], dst: &mut [Self]) {
        dst[..src.len()].copy_from_slice(src);
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
    fn as_f32(s: &[Self]) -> Option<&[f32]> {
        Some(s)
    }
    fn as_f32_mut(s: &mut [Self]) -> Option<&mut [f32]> {
        Some(s)
    }
    fn ulp(v: f64) -> f64 {
        let a = v.abs() as f32;
        gap(
            f64::from(a),
            f64::from(f32::from_bits(a.to_bits().wrapping_add(1))),
        )
    }
}

impl Element for f16 {
    const PRECISION: Precision = Precision::Fp16;
    const POISON: Self = f16::NAN;
    const ZERO: Self = f16::ZERO;
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    fn load(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(&mut dst[..src.len()]);
    }
    fn store(src: &[f32], dst: &mut [Self]) {
        let n = src.len();
        dst[..n].convert_from_f32_slice(src);
    }
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn ulp(v: f64) -> f64 {
        let a = f16::from_f64(v.abs());
        gap(
            a.to_f64(),
            f16::from_bits(a.to_bits().wrapping_add(1)).to_f64(),
        )
    }
}

impl Element for bf16 {
    const PRECISION: Precision = Precision::Bf16;
    const POISON: Self = bf16::NAN;
    const ZERO: Self = bf16::ZERO;
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
    fn load(src: &[Self], dst: &mut [f32]) {
        // A plain shift per element; written as a loop so it auto-vectorizes.
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits(u32::from(s.to_bits()) << 16);
        }
    }
    fn store(src: &[f32], dst: &mut [Self]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = bf16_round(s);
        }
    }
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn ulp(v: f64) -> f64 {
        let a = bf16::from_f64(v.abs());
        gap(
            a.to_f64(),
            bf16::from_bits(a.to_bits().wrapping_add(1)).to_f64(),
        )
    }
}

/// Round-to-nearest-even f32 → bf16, the same integer recipe the CUDA kernels use, so that CPU and
/// GPU round identically (NaN stays a quiet NaN).
#[inline(always)]
fn bf16_round(v: f32) -> bf16 {
    let u = v.to_bits();
    if v.is_nan() {
        return bf16::from_bits(0x7fc0);
    }
    let rounded = u.wrapping_add(0x7fff + ((u >> 16) & 1));
    bf16::from_bits((rounded >> 16) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding_matches_half() {
        for &v in &[
            0.0f32,
            1.0,
            -1.5,
            3.5e-2,
            1e-3,
            65504.0,
            -2.718_281_7,
            1.0 + 1.0 / 256.0,
        ] {
            assert_eq!(bf16_round(v), bf16::from_f32(v), "{v}");
        }
    }

    #[test]
    fn ulp_is_the_storage_step() {
        assert_eq!(f32::ulp(1.0), f64::from(f32::EPSILON));
        assert_eq!(f16::ulp(1.0), 2f64.powi(-10));
        assert_eq!(bf16::ulp(-1.0), 2f64.powi(-7));
        // fp16 subnormals: a fixed step of 2^-24.
        assert_eq!(f16::ulp(1e-7), 2f64.powi(-24));
        assert!(f16::ulp(1e6).is_infinite());
    }

    #[test]
    fn slice_round_trip_is_exact_for_representable_values() {
        let src = [0.5f32, -2.0, 1.25, 0.0];
        let mut h = [f16::ZERO; 4];
        f16::store(&src, &mut h);
        let mut back = [0.0f32; 4];
        f16::load(&h, &mut back);
        assert_eq!(src, back);
    }
}
