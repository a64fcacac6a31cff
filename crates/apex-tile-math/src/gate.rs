//! FusionGate (`spec/apex-x-kernels.md` §1.4): `alpha = sigmoid(softplus(wb)*boundary +
//! softplus(wu)*uncertainty + bias)`, proxies sanitised first (`nan → 0, +inf → 1, -inf → 0`),
//! and `fused = base + alpha*(heavy - base)`.

use crate::Real;

/// `ln(1 + e^x)`, exact to f64 rounding for `x <= 30` and `x` itself above.
pub fn softplus(x: f64) -> f64 {
    if x > 30.0 { x } else { x.exp().ln_1p() }
}

/// `1 / (1 + e^-x)`.
pub fn sigmoid<R: Real>(x: R) -> R {
    R::ONE / (R::ONE + (-x).exp())
}

/// A proxy as the model sanitises it: `nan → 0`, `+inf → 1`, `-inf → 0`.
pub fn clean_proxy<R: Real>(v: R) -> R {
    if v.is_nan() {
        R::ZERO
    } else if v == R::infinity() {
        R::ONE
    } else if v == -R::infinity() {
        R::ZERO
    } else {
        v
    }
}

/// The gate's weights after their constraint: `(softplus(boundary_log_weight),
/// softplus(uncertainty_log_weight), bias)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateWeights {
    pub wb: f64,
    pub wu: f64,
    pub bias: f64,
}

impl GateWeights {
    pub fn from_raw(boundary_log_weight: f64, uncertainty_log_weight: f64, bias: f64) -> Self {
        Self {
            wb: softplus(boundary_log_weight),
            wu: softplus(uncertainty_log_weight),
            bias,
        }
    }

    /// The original's defaults: both log weights 1, bias 0.
    pub fn defaults() -> Self {
        Self::from_raw(1.0, 1.0, 0.0)
    }

    /// `alpha` of one pixel.
    pub fn alpha<R: Real>(&self, boundary: R, uncertainty: R) -> R {
        let z = R::from_f64(self.wb) * clean_proxy(boundary)
            + R::from_f64(self.wu) * clean_proxy(uncertainty)
            + R::from_f64(self.bias);
        sigmoid(z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_weights_give_the_documented_alpha_range() {
        let g = GateWeights::defaults();
        assert!((g.wb - 1.313_261_687_518_223).abs() < 1e-12);
        assert_eq!(g.alpha(0.0f64, 0.0), 0.5);
        let top: f64 = g.alpha(1.0, 1.0);
        assert!((top - 0.932_9).abs() < 1e-3, "{top}");
        assert_eq!(
            g.alpha(f64::NAN, f64::NEG_INFINITY),
            0.5,
            "nan and -inf proxies count as 0"
        );
        assert_eq!(g.alpha(f64::INFINITY, 0.0), g.alpha(1.0, 0.0));
    }
}
