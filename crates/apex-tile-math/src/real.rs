//! [`Real`]: the float operations the generic formulas of this crate need, for `f32` and `f64`,
//! so one formula serves an f64 reference and an f32 fast path.

use std::ops::{Add, Div, Mul, Neg, Sub};

pub trait Real:
    Copy
    + PartialOrd
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + std::fmt::Debug
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn exp(self) -> Self;
    fn ln_1p(self) -> Self;
    fn tanh(self) -> Self;
    fn sqrt(self) -> Self;
    fn is_nan(self) -> bool;
    /// The larger of the two; a NaN `self` gives `other` (as `f32::max`).
    fn max(self, other: Self) -> Self;
    fn min(self, other: Self) -> Self;
    fn infinity() -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline]
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            #[inline]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            #[inline]
            fn infinity() -> Self {
                <$t>::INFINITY
            }
        }
    };
}

real!(f32);
real!(f64);
