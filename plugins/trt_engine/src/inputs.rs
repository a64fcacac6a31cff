//! Engine inputs, generated per dtype as the seed does (apex-x-kernels.md §3.1): floating-point
//! inputs standard normal, BOOL 0 or 1, integer inputs uniform in 0..8; each input from its own
//! stream seeded `seed + 57 + io_index` (the seed's modern-mode seeds). Deterministic: the same
//! seed gives the same inputs on every machine (SplitMix64 and Box–Muller, no dependency).

use half::{bf16, f16};

use crate::tensor::{DType, ResolvedInput};

/// One host tensor's data, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum HostData {
    F32(Vec<f32>),
    F16(Vec<f16>),
    Bf16(Vec<bf16>),
    F64(Vec<f64>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl HostData {
    /// Every element as f64 (for references and comparisons).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Self::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::F16(v) => v.iter().map(|&x| x.to_f64()).collect(),
            Self::Bf16(v) => v.iter().map(|&x| x.to_f64()).collect(),
            Self::F64(v) => v.clone(),
            Self::I8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::U8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Self::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Self::Bool(v) => v.iter().map(|&x| f64::from(u8::from(x))).collect(),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Self::F32(v) => v.len(),
            Self::F16(v) => v.len(),
            Self::Bf16(v) => v.len(),
            Self::F64(v) => v.len(),
            Self::I8(v) => v.len(),
            Self::U8(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::I64(v) => v.len(),
            Self::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The raw bytes, native endian (what a device copy takes).
    pub fn bytes(&self) -> Vec<u8> {
        fn raw<T: Copy>(v: &[T], f: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
            v.iter().flat_map(|&x| f(x)).collect()
        }
        match self {
            Self::F32(v) => raw(v, |x| x.to_ne_bytes().to_vec()),
            Self::F16(v) => raw(v, |x| x.to_ne_bytes().to_vec()),
            Self::Bf16(v) => raw(v, |x| x.to_ne_bytes().to_vec()),
            Self::F64(v) => raw(v, |x| x.to_ne_bytes().to_vec()),
            Self::I8(v) => raw(v, |x| x.to_ne_bytes().to_vec()),
            Self::U8(v) => v.clone(),
            Self::I32(v) => raw(v, |x| x.to_ne_bytes().to_vec()),
            Self::I64(v) => raw(v, |x| x.to_ne_bytes().to_vec()),
            Self::Bool(v) => v.iter().map(|&b| u8::from(b)).collect(),
        }
    }

    /// Reads `bytes` (native endian) as `dtype`; `None` when the length does not fit.
    pub fn from_bytes(dtype: DType, bytes: &[u8]) -> Option<Self> {
        let size = dtype.size_bytes();
        if !bytes.len().is_multiple_of(size) {
            return None;
        }
        let chunks = bytes.chunks_exact(size);
        let arr = |c: &[u8]| -> [u8; 8] {
            let mut a = [0u8; 8];
            a[..c.len()].copy_from_slice(c);
            a
        };
        Some(match dtype {
            DType::F32 => Self::F32(
                chunks
                    .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            DType::F16 => Self::F16(chunks.map(|c| f16::from_ne_bytes([c[0], c[1]])).collect()),
            DType::Bf16 => Self::Bf16(chunks.map(|c| bf16::from_ne_bytes([c[0], c[1]])).collect()),
            DType::F64 => Self::F64(chunks.map(|c| f64::from_ne_bytes(arr(c))).collect()),
            DType::I8 => Self::I8(chunks.map(|c| c[0] as i8).collect()),
            DType::U8 => Self::U8(chunks.map(|c| c[0]).collect()),
            DType::I32 => Self::I32(
                chunks
                    .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            DType::I64 => Self::I64(chunks.map(|c| i64::from_ne_bytes(arr(c))).collect()),
            DType::Bool => Self::Bool(chunks.map(|c| c[0] != 0).collect()),
        })
    }
}

/// A named host tensor with its shape.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTensor {
    pub name: String,
    pub dims: Vec<usize>,
    pub data: HostData,
}

/// SplitMix64: a small, well-mixed stream from one seed.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.unit(), self.unit());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// The inputs of one query: input `i` from the stream `seed + 57 + i`.
pub fn generate(inputs: &[ResolvedInput], seed: u64) -> Vec<HostTensor> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let mut rng = SplitMix(seed.wrapping_add(57).wrapping_add(i as u64));
            let n = input.elements();
            let data = match input.dtype {
                DType::F32 => HostData::F32((0..n).map(|_| rng.normal() as f32).collect()),
                DType::F16 => HostData::F16((0..n).map(|_| f16::from_f64(rng.normal())).collect()),
                DType::Bf16 => {
                    HostData::Bf16((0..n).map(|_| bf16::from_f64(rng.normal())).collect())
                }
                DType::F64 => HostData::F64((0..n).map(|_| rng.normal()).collect()),
                DType::Bool => HostData::Bool((0..n).map(|_| rng.below(2) == 1).collect()),
                DType::I8 => HostData::I8((0..n).map(|_| rng.below(8) as i8).collect()),
                DType::U8 => HostData::U8((0..n).map(|_| rng.below(8) as u8).collect()),
                DType::I32 => HostData::I32((0..n).map(|_| rng.below(8) as i32).collect()),
                DType::I64 => HostData::I64((0..n).map(|_| rng.below(8) as i64).collect()),
            };
            HostTensor {
                name: input.name.clone(),
                dims: input.dims.clone(),
                data,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(dtype: DType, n: usize) -> ResolvedInput {
        ResolvedInput {
            name: "x".into(),
            dtype,
            dims: vec![n],
        }
    }

    #[test]
    fn floats_are_standard_normal_and_integers_in_range() {
        let t = generate(&[input(DType::F32, 20_000)], 7);
        let v = t[0].data.to_f64();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
            "{mean} {var}"
        );
        let ints = generate(&[input(DType::I32, 1000)], 7)[0].data.to_f64();
        assert!(ints.iter().all(|&x| (0.0..8.0).contains(&x)));
        let bools = generate(&[input(DType::Bool, 1000)], 7)[0].data.to_f64();
        assert!(bools.iter().all(|&x| x == 0.0 || x == 1.0));
    }

    #[test]
    fn each_input_has_its_own_stream_and_seeds_repeat() {
        let two = [input(DType::F32, 8), input(DType::F32, 8)];
        let a = generate(&two, 1);
        assert_ne!(a[0].data, a[1].data);
        assert_eq!(a, generate(&two, 1));
        assert_ne!(a, generate(&two, 2));
    }

    #[test]
    fn bytes_round_trip() {
        let t = generate(&[input(DType::F16, 5)], 3);
        let back = HostData::from_bytes(DType::F16, &t[0].data.bytes()).unwrap();
        assert_eq!(back, t[0].data);
        assert!(HostData::from_bytes(DType::F32, &[0u8; 5]).is_none());
    }
}
