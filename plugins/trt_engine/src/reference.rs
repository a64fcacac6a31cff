//! The f64 references of the committed test models (`models/make_models.py`). Each repeats the
//! model's math and its weight formulas in f64: an independent implementation, not a copy of
//! any runtime's output. A model that computes something else (`models/fixtures/mlp_wrong.onnx`)
//! fails the accuracy check against it.

use crate::inputs::HostTensor;

/// A reference: the expected outputs (by output name) for the given inputs.
pub type Expected = Vec<(String, Vec<f64>)>;

/// The references this plugin has, by the name a case's `reference` parameter uses.
pub const KNOWN: [&str; 2] = ["mlp", "fusion_gate"];

/// Computes the reference `name` for `inputs`; an error names what does not fit.
pub fn expected(name: &str, inputs: &[HostTensor]) -> Result<Expected, String> {
    match name {
        "mlp" => mlp(inputs),
        "fusion_gate" => fusion_gate(inputs),
        other => Err(format!(
            "no reference named `{other}` (known: {})",
            KNOWN.join(", ")
        )),
    }
}

const IN: usize = 32;
const HIDDEN: usize = 32;
const OUT: usize = 16;

fn w1(i: usize, j: usize) -> f64 {
    ((i * 7 + j * 13) % 17) as f64 / 64.0 - 8.0 / 64.0
}
fn b1(j: usize) -> f64 {
    ((j * 5) % 11) as f64 / 32.0 - 5.0 / 32.0
}
fn w2(i: usize, j: usize) -> f64 {
    ((i * 3 + j * 11) % 13) as f64 / 64.0 - 6.0 / 64.0
}
fn b2(j: usize) -> f64 {
    ((j * 7) % 9) as f64 / 16.0 - 4.0 / 16.0
}

fn input<'a>(inputs: &'a [HostTensor], name: &str) -> Result<&'a HostTensor, String> {
    inputs
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| format!("the reference needs an input named `{name}`"))
}

/// `y = relu(x @ W1 + b1) @ W2 + b2`, x `[batch, 32]`, y `[batch, 16]`.
fn mlp(inputs: &[HostTensor]) -> Result<Expected, String> {
    let x = input(inputs, "x")?;
    if x.dims.len() != 2 || x.dims[1] != IN {
        return Err(format!("mlp: x must be [batch, {IN}], got {:?}", x.dims));
    }
    let xv = x.data.to_f64();
    let batch = x.dims[0];
    let mut y = Vec::with_capacity(batch * OUT);
    for b in 0..batch {
        let row = &xv[b * IN..(b + 1) * IN];
        let hidden: Vec<f64> = (0..HIDDEN)
            .map(|j| {
                let s: f64 = row.iter().enumerate().map(|(i, &v)| v * w1(i, j)).sum();
                (s + b1(j)).max(0.0)
            })
            .collect();
        for j in 0..OUT {
            let s: f64 = hidden.iter().enumerate().map(|(i, &h)| h * w2(i, j)).sum();
            y.push(s + b2(j));
        }
    }
    Ok(vec![("y".to_string(), y)])
}

const FG_WB: f64 = 1.0;
const FG_WU: f64 = 1.0;
const FG_BIAS: f64 = -0.5;

/// `alpha = sigmoid(wb*boundary + wu*uncertainty + bias)` over `[1,1,H,W]`, broadcast over the
/// channels; `out = base + alpha * (detail - base)`.
fn fusion_gate(inputs: &[HostTensor]) -> Result<Expected, String> {
    let (base, detail) = (input(inputs, "base")?, input(inputs, "detail")?);
    let (boundary, uncertainty) = (input(inputs, "boundary")?, input(inputs, "uncertainty")?);
    let [n, c, h, w] = base.dims[..] else {
        return Err(format!(
            "fusion_gate: base must be 4-D, got {:?}",
            base.dims
        ));
    };
    if n != 1 || detail.dims != base.dims || boundary.dims != [1, 1, h, w] {
        return Err("fusion_gate: shapes must be base, detail [1,C,H,W] and boundary, uncertainty [1,1,H,W]".into());
    }
    let (bv, dv) = (base.data.to_f64(), detail.data.to_f64());
    let (gb, gu) = (boundary.data.to_f64(), uncertainty.data.to_f64());
    let plane = h * w;
    let alpha: Vec<f64> = (0..plane)
        .map(|p| 1.0 / (1.0 + (-(FG_WB * gb[p] + FG_WU * gu[p] + FG_BIAS)).exp()))
        .collect();
    let out = (0..c * plane)
        .map(|i| {
            let a = alpha[i % plane];
            bv[i] + a * (dv[i] - bv[i])
        })
        .collect();
    Ok(vec![("out".to_string(), out)])
}

/// The floating-point operations of one query of the committed model `name` at `inputs`' shapes.
pub fn flops(name: &str, inputs: &[crate::tensor::ResolvedInput]) -> f64 {
    let dims = |n: &str| inputs.iter().find(|i| i.name == n).map(|i| i.dims.clone());
    match name {
        "mlp" => dims("x").map_or(0.0, |d| {
            let batch = d[0] as f64;
            batch
                * (2.0 * (IN * HIDDEN) as f64
                    + 2.0 * HIDDEN as f64
                    + 2.0 * (HIDDEN * OUT) as f64
                    + OUT as f64)
        }),
        // Per plane: 2 mul, 2 add, sigmoid (counted 4); per element: sub, mul, add.
        "fusion_gate" => dims("base").map_or(0.0, |d| {
            let plane = (d[2] * d[3]) as f64;
            plane * 8.0 + (d[1] as f64) * plane * 3.0
        }),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::HostData;

    #[test]
    fn the_weights_are_the_scripts() {
        // Spot values of make_models.py's formulas.
        assert_eq!(w1(0, 0), -8.0 / 64.0);
        assert_eq!(w1(1, 1), (20 % 17) as f64 / 64.0 - 8.0 / 64.0);
        assert_eq!(b2(3), (21 % 9) as f64 / 16.0 - 0.25);
    }

    #[test]
    fn mlp_of_zeros_is_the_bias_path() {
        let x = HostTensor {
            name: "x".into(),
            dims: vec![1, IN],
            data: HostData::F32(vec![0.0; IN]),
        };
        let y = &mlp(&[x]).unwrap()[0].1;
        let hidden: Vec<f64> = (0..HIDDEN).map(|j| b1(j).max(0.0)).collect();
        let y0: f64 = hidden
            .iter()
            .enumerate()
            .map(|(i, h)| h * w2(i, 0))
            .sum::<f64>()
            + b2(0);
        assert!((y[0] - y0).abs() < 1e-15);
        assert!(expected("nope", &[]).is_err());
    }
}
