//! [`check_last_row`]: a CUDA case's device reference against the f64 CPU reference on one batch
//! row, on every verify. The CPU side draws only that row's inputs (the stream is counter-based:
//! [`crate::selection::uniform_range_into`]) and runs the op's own [`TileOp::reference`] on a
//! one-row copy of the op ([`TileOp::one_row`]); the last row is the one whose offsets are largest.
//! A disagreement is an error of the verifier itself, so the case fails with that reason instead of
//! being reported as verified.

use apex_plugin_api::PluginError;
use apex_plugin_api::cuda::cuda_error;

use crate::{
    Element,
    device::DeviceState,
    op::{Draw, Inputs, TileOp},
    selection::{Rng, uniform_range_into},
};

/// How far the device reference may sit from the CPU one: both are f64 from the same inputs; only
/// `exp` (FusionGate's sigmoid) may differ in its last bit, and every tolerance a case is judged
/// by is ten orders of magnitude wider.
const AGREE: f64 = 1e-12;

/// Row `row` of the inputs of `op` for `seed`: the index tensors and host-drawn data sliced out of
/// `host`, the uniform tensors drawn for that row only.
pub fn row_inputs<O: TileOp, T: Element>(
    op: &O,
    seed: u64,
    host: &Inputs<T>,
    row: usize,
) -> Inputs<T> {
    let batch = op.batch();
    let data = op
        .data_specs()
        .iter()
        .zip(&host.data)
        .map(|(spec, tensor)| {
            let per = spec.len / batch;
            match spec.draw {
                Draw::Host => tensor[row * per..][..per].to_vec(),
                Draw::Uniform { stream, lo, hi } => {
                    let mut v = Vec::new();
                    let first = (row * per) as u64;
                    uniform_range_into(&mut v, first, per, lo, hi, &Rng::new(seed, stream));
                    v
                }
            }
        })
        .collect();
    let ints = host
        .ints
        .iter()
        .map(|v| {
            let per = v.len() / batch;
            v[row * per..][..per].to_vec()
        })
        .collect();
    Inputs { data, ints }
}

/// Compares the device reference (written by the op's reference launches for the inputs of
/// `seed`) with the CPU reference on the last batch row.
pub fn check_last_row<O: TileOp, T: Element>(
    op: &O,
    seed: u64,
    host: &Inputs<T>,
    device: &DeviceState,
) -> Result<(), PluginError> {
    let batch = op.batch();
    let row = batch - 1;
    let want = op.one_row().reference(&row_inputs(op, seed, host, row));
    let reference = device.check.written_reference()?;
    let stream = device.stream();
    let mut got = vec![0.0f64; want.len()];
    let (mut offset, mut at) = (0, 0);
    for len in op.output_lens() {
        let per = len / batch;
        let start = offset + row * per;
        stream
            .memcpy_dtoh(&reference.slice(start..start + per), &mut got[at..at + per])
            .map_err(cuda_error)?;
        offset += len;
        at += per;
    }
    stream.synchronize().map_err(cuda_error)?;
    match got.iter().zip(&want).position(|(&g, &w)| !agree(g, w)) {
        None => Ok(()),
        Some(i) => Err(PluginError::invalid(format!(
            "the device reference of batch row {row} differs from the f64 CPU reference at element \
             {i} of the row ({:e} against {:e}): a fault of the plugin's verifier, not of the kernel \
             under test, so this case is not verified (hint: report it with the case id)",
            got[i], want[i]
        ))),
    }
}

fn agree(got: f64, want: f64) -> bool {
    got == want
        || (got.is_nan() && want.is_nan())
        || (got - want).abs() <= AGREE * want.abs().max(1.0)
}

#[cfg(test)]
mod tests {
    use apex_plugin_api::ParamValue;

    use super::*;
    use crate::{
        case::OpKernel,
        harness::{params, small_shape},
        ops::{FusedStage, FusionGate, TilePack, TileUnpack},
    };

    /// A row's inputs drawn on their own equal that row of the whole inputs, and the one-row op's
    /// reference of them equals that row of the whole reference: what makes the device reference
    /// checkable one row at a time.
    fn rows_are_independent<O: TileOp>(extra: &[(&'static str, ParamValue)]) {
        let kernel = OpKernel::<O>::default();
        let mut o = small_shape(3, 2, 32, 8, 9);
        o.extend_from_slice(extra);
        let op = O::plan(&params(&kernel, &o)).expect("plan");
        let all = op.generate::<f32>(7);
        let mut host = Inputs::<f32>::empty();
        op.generate_host(7, &mut host);
        let whole = op.reference(&all);
        let lens = op.output_lens();
        for row in 0..3 {
            let inputs = row_inputs(&op, 7, &host, row);
            for (k, (part, full)) in inputs.data.iter().zip(&all.data).enumerate() {
                let per = full.len() / 3;
                let same = part
                    .iter()
                    .zip(&full[row * per..][..per])
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same && part.len() == per, "data {k} of row {row}");
            }
            let got = op.one_row().reference(&inputs);
            let mut want = Vec::new();
            let mut offset = 0;
            for len in &lens {
                let per = len / 3;
                want.extend_from_slice(&whole[offset + row * per..][..per]);
                offset += len;
            }
            assert_eq!(got.len(), want.len());
            assert!(
                got.iter().zip(&want).all(|(&g, &w)| agree(g, w)),
                "row {row} of {}",
                O::descriptor().id
            );
        }
    }

    #[test]
    fn every_op_checks_one_row_as_the_whole_computes_it() {
        let s = |v: &str| ParamValue::Str(v.into());
        rows_are_independent::<TilePack>(&[("ids", s("overlap"))]);
        rows_are_independent::<FusedStage>(&[("ids", s("overlap"))]);
        rows_are_independent::<TileUnpack>(&[
            ("ids", s("overlap")),
            ("offgrid", ParamValue::Bool(true)),
        ]);
        rows_are_independent::<TileUnpack>(&[("ids", s("overlap")), ("mode", s("blend"))]);
        rows_are_independent::<FusionGate>(&[]);
    }

    #[test]
    fn agreement_allows_the_last_bit_only() {
        assert!(agree(1.0, 1.0 + 1e-15));
        assert!(agree(f64::NAN, f64::NAN));
        assert!(!agree(1.0, 1.0 + 1e-9));
        assert!(!agree(0.0, f64::NAN));
        assert!(!agree(2.0, 2.001));
    }
}
