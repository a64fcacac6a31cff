//! [`Storage`]: how a CUDA case stores its maps, proxies and GEMM operands (fp32, fp16 or bf16),
//! and the host-side conversions: rounding the f32 inputs to the stored values (so the f64
//! reference sees exactly what the device reads), and the byte encodings for uploads and
//! downloads. Every sum and every op other than the GEMM's operands runs in f32 on the device.

use apex_plugin_api::{PluginError, Precision};
use half::{bf16, f16};

/// The element type of a case's device maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    F32,
    F16,
    Bf16,
}

impl Storage {
    pub fn of(precision: Precision) -> Result<Self, PluginError> {
        match precision {
            Precision::Fp32 => Ok(Self::F32),
            Precision::Fp16 => Ok(Self::F16),
            Precision::Bf16 => Ok(Self::Bf16),
            other => Err(PluginError::invalid(format!(
                "ff_model.infer has no {other} path (hint: use fp32, fp16 or bf16)"
            ))),
        }
    }

    /// `DTYPE` of the fast path's program (`cuda/fast/*.cu`).
    pub fn code(self) -> u32 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
            Self::Bf16 => 2,
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 | Self::Bf16 => 2,
        }
    }

    /// `v` rounded to this storage (round to nearest even) and back.
    pub fn round(self, v: f32) -> f32 {
        match self {
            Self::F32 => v,
            Self::F16 => f16::from_f32(v).to_f32(),
            Self::Bf16 => bf16::from_f32(v).to_f32(),
        }
    }

    /// Rounds every value of `v` in place.
    pub fn round_all(self, v: &mut [f32]) {
        if self != Self::F32 {
            v.iter_mut().for_each(|x| *x = self.round(*x));
        }
    }

    /// The 16-bit pattern of `v` (fp16 or bf16; fp32 has none).
    pub fn bits16(self, v: f32) -> u16 {
        match self {
            Self::F16 => f16::from_f32(v).to_bits(),
            Self::Bf16 | Self::F32 => bf16::from_f32(v).to_bits(),
        }
    }

    /// The device bytes of `v`.
    pub fn encode(self, v: &[f32]) -> Vec<u8> {
        match self {
            Self::F32 => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            _ => v
                .iter()
                .flat_map(|&x| self.bits16(x).to_le_bytes())
                .collect(),
        }
    }

    /// The values of device bytes `b`.
    pub fn decode(self, b: &[u8]) -> Vec<f32> {
        match self {
            Self::F32 => b
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            Self::F16 => b
                .chunks_exact(2)
                .map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
                .collect(),
            Self::Bf16 => b
                .chunks_exact(2)
                .map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
                .collect(),
        }
    }

    /// `n` NaN elements (the poison of an output).
    pub fn poison(self, n: usize) -> Vec<u8> {
        self.encode(&vec![f32::NAN; n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_round_trip_rounded_values_and_keep_nan() {
        for s in [Storage::F32, Storage::F16, Storage::Bf16] {
            let mut v = vec![0.0, -1.5, 3.140_625, 1e-3, 65000.0, 1.0 / 3.0];
            s.round_all(&mut v);
            assert_eq!(s.decode(&s.encode(&v)), v, "{s:?}");
            assert_eq!(s.encode(&v).len(), v.len() * s.bytes());
            assert!(s.decode(&s.poison(3)).iter().all(|x| x.is_nan()));
        }
        assert_eq!(Storage::F16.round(1.0 / 3.0), 0.333_251_95);
        assert_eq!(Storage::Bf16.round(1.0 / 3.0), 0.333_984_38);
        assert!(Storage::of(Precision::Fp8).is_err());
    }
}
