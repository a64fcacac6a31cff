//! [`Real`] (the arithmetic type, f32 or f64) and [`Storage`] (the type vectors are stored in:
//! f32, f16 with f32 arithmetic, or f64 for `f64_solve`).

use std::ops::{Add, Div, Mul, Neg, Sub};

use half::f16;

/// The arithmetic type of a solve.
pub trait Real:
    Copy
    + Send
    + Sync
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + 'static
{
    const ZERO: Self;
    fn of(v: f64) -> Self;
    fn f64(self) -> f64;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    fn of(v: f64) -> Self {
        v as f32
    }
    fn f64(self) -> f64 {
        f64::from(self)
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    fn of(v: f64) -> Self {
        v
    }
    fn f64(self) -> f64 {
        self
    }
}

/// A storage type: every vector of a solve is held in it; arithmetic happens in `Acc`.
pub trait Storage: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    type Acc: Real;
    /// `fp32`, `fp16` or `fp64` (messages and labels).
    const NAME: &'static str;
    /// `STORE` in the CUDA source: 0 = fp32, 1 = fp16 (raw bits, f32 arithmetic), 2 = fp64.
    const CUDA_CODE: u32;
    /// The NaN used to poison outputs.
    const POISON: Self;
    const ZERO: Self;
    fn load(self) -> Self::Acc;
    fn store(v: Self::Acc) -> Self;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

impl Storage for f32 {
    type Acc = f32;
    const NAME: &'static str = "fp32";
    const CUDA_CODE: u32 = 0;
    const POISON: Self = f32::NAN;
    const ZERO: Self = 0.0;
    fn load(self) -> f32 {
        self
    }
    fn store(v: f32) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Storage for f16 {
    type Acc = f32;
    const NAME: &'static str = "fp16";
    const CUDA_CODE: u32 = 1;
    const POISON: Self = f16::NAN;
    const ZERO: Self = f16::ZERO;
    fn load(self) -> f32 {
        self.to_f32()
    }
    fn store(v: f32) -> Self {
        f16::from_f32(v)
    }
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
}

impl Storage for f64 {
    type Acc = f64;
    const NAME: &'static str = "fp64";
    const CUDA_CODE: u32 = 2;
    const POISON: Self = f64::NAN;
    const ZERO: Self = 0.0;
    fn load(self) -> f64 {
        self
    }
    fn store(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// Converts a stored vector to f64 (verification, downloads).
pub fn to_f64_vec<T: Storage>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// Rounds an f64 vector into storage type `T`.
pub fn from_f64_vec<T: Storage>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x)).collect()
}
