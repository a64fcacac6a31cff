//! The self-check of one case: fresh inputs with poisoned outputs against the f64 reference, a
//! round after `rotate(4)`, and a poisoned output that must fail.

use apex_plugin_api::{CudaHandles, Instance, PluginError, Precision, Tolerance};
use apex_plugin_ff_model::{FfCase, device::Refine, problem};

use crate::cases::{is_eager, plan, setup, shapes};

/// Checks every shape `wanted` takes in each of `precisions`, the fast path's on each of
/// `refines` (the eager path's once), printing a line per case; returns the cases that failed.
pub fn check_shapes(
    handles: CudaHandles,
    sync: &dyn Fn() -> Result<(), PluginError>,
    wanted: &dyn Fn(&str) -> bool,
    refines: &[Refine],
    precisions: &[Precision],
) -> usize {
    let mut failures = 0;
    for (label, overrides) in shapes().into_iter().filter(|(l, _)| wanted(l)) {
        let paths: Vec<Option<Refine>> = if is_eager(&overrides) {
            vec![None]
        } else {
            refines.iter().copied().map(Some).collect()
        };
        for &precision in precisions {
            let tol = problem::descriptor().tolerance_for(precision);
            for &refine in &paths {
                let result = setup(&overrides, precision, handles, refine).and_then(|mut case| {
                    let how = plan(&case);
                    check_case(&mut case, &tol, sync).map(|text| (how, text))
                });
                match result {
                    Ok((how, text)) => println!("ok   {label} {precision} {how}\n    {text}"),
                    Err(text) => {
                        failures += 1;
                        let asked = refine.map_or("eager".into(), |r| format!("{r:?}"));
                        println!("FAIL {label} {precision} {asked}\n    {text}");
                    }
                }
            }
        }
    }
    failures
}

/// `(max abs error, worst |err| / (atol + rtol*|ref|))` of `got` against `want`.
fn errors(got: &[f32], want: &[f64], tol: &Tolerance) -> (f64, f64) {
    got.iter()
        .zip(want)
        .fold((0.0f64, 0.0f64), |(m, r), (&g, &w)| {
            let e = (f64::from(g) - w).abs();
            let e = if e.is_nan() { f64::INFINITY } else { e };
            (m.max(e), r.max(e / (tol.atol + tol.rtol * w.abs())))
        })
}

/// The check's lines for `case` (each round's errors per output), or why it failed.
fn check_case(
    case: &mut FfCase,
    tol: &Tolerance,
    sync: &dyn Fn() -> Result<(), PluginError>,
) -> Result<String, String> {
    let mut lines = Vec::new();
    for (round, seed) in [(0, 11u64), (1, 12), (2, 13)] {
        if round == 2 {
            let sets = case.rotate(4).map_err(|e| format!("rotate: {e}"))?;
            lines.push(format!("rotate -> {sets} sets"));
        }
        case.prepare_check(seed)
            .map_err(|e| format!("prepare: {e}"))?;
        case.run().map_err(|e| format!("run: {e}"))?;
        sync().map_err(|e| format!("sync: {e}"))?;
        let acc = case.verify(tol).map_err(|e| format!("verify: {e}"))?;
        let want = case.reference().map_err(|e| format!("reference: {e}"))?;
        let (h, d, a) = case.outputs();
        let parts = [
            ("heavy", errors(h, &want.heavy, tol)),
            ("detail", errors(d, &want.detail, tol)),
            ("alpha", errors(a, &want.alpha, tol)),
        ];
        let line = parts
            .iter()
            .map(|(n, (m, r))| format!("{n} {m:.2e} ({:.0}%)", 100.0 * r))
            .collect::<Vec<_>>()
            .join(", ");
        lines.push(format!(
            "seed {seed}: {line}; rmse {:.2e}, mismatch ratio {:.1e}",
            acc.rmse, acc.mismatch_ratio
        ));
        if !acc.within(tol) || acc.non_finite > 0 {
            return Err(format!("{}\n    {acc:?}", lines.join("\n    ")));
        }
    }
    case.prepare_check(14)
        .map_err(|e| format!("prepare: {e}"))?;
    match case.verify(tol) {
        Ok(acc) if acc.non_finite > 0 && !acc.within(tol) => lines.push(format!(
            "poisoned outputs caught; note: {}",
            case.verify_note()
        )),
        Ok(acc) => return Err(format!("poison not caught: {acc:?}")),
        Err(e) => return Err(format!("verify of poison: {e}")),
    }
    Ok(lines.join("\n    "))
}
