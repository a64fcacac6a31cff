//! Verification of one solve: the figures every case reports and the rule that decides it.
//!
//! A solve passes when (1) every value of `x` is finite, (2) the solver reached the tolerance
//! within `max_iterations`, (3) the true relative residual `||b - A x|| / ||b||`, recomputed in
//! f64 from the returned `x`, is at most [`RESIDUAL_SLACK`] times the tolerance (so a solver
//! whose own residual drifted from the truth, or lied, fails), and (4) `x` is within the case's
//! tolerance (`atol + rtol*|u*|` per point, `rmse`) of the manufactured solution `u*`.
//!
//! The figures travel in the fields [`Accuracy`] has (README.md, "What a case reports"):
//! `rmse` / `max_abs_error` = the true error `x - u*` (RMS / max), `max_rel_error` = the true
//! relative residual, `mismatch_ratio` = 1 when (2) or (3) fails (else the fraction of points
//! outside `atol + rtol*|u*|`), `non_finite` = non-finite values of `x`. The iteration count is
//! in the case's work (`items` = points x iterations) and, with the solver's own and the true
//! relative residual, in the case's `figures` (`Instance::figures`). The sentence ("did not converge: ...") is
//! [`Verdict::failure`], which the tests and the GPU self-check print.

use apex_plugin_api::{Accuracy, Tolerance, compare_outputs};

use crate::{
    grid::Level,
    problem::Problem,
    reference,
    solve::{Report, Settings},
};

/// How far the true relative residual may exceed the tolerance the solver stopped at (recursive
/// CG residuals drift from the true one by rounding: about 1e-6 in fp32 here).
pub const RESIDUAL_SLACK: f64 = 10.0;

/// Everything verification found.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub report: Report,
    pub tolerance: f64,
    /// `||b - A x|| / ||b||` in f64 from the returned `x`.
    pub true_relres: f64,
    pub accuracy: Accuracy,
    /// Why the solve fails, or `None`.
    pub failure: Option<String>,
}

impl Verdict {
    pub fn passed(&self, tol: &Tolerance) -> bool {
        self.failure.is_none() && self.accuracy.within(tol)
    }

    /// One line: iterations, residuals, error, and the failure if any.
    pub fn summary(&self) -> String {
        format!(
            "{} iterations, relres {:.3e} (true {:.3e}), error vs u* max {:.3e} rms {:.3e}{}",
            self.report.iterations,
            self.report.relres,
            self.true_relres,
            self.accuracy.max_abs_error,
            self.accuracy.rmse,
            self.failure
                .as_ref()
                .map_or(String::new(), |f| format!(": {f}"))
        )
    }
}

/// Judges solution `x` (converted to f64) of `problem` reported by the solver as `report`.
pub fn judge(
    problem: &Problem,
    x: &[f64],
    report: Report,
    settings: &Settings,
    tol: &Tolerance,
) -> Verdict {
    let mut accuracy = compare_outputs(x, &problem.u_star, tol);
    let fine = Level::finest(problem.dims);
    let res = reference::residual_norm2(&fine, x, &problem.b);
    let res0 = reference::dot(&problem.b, &problem.b);
    let true_relres = crate::solve::relative(res, res0);
    let true_relres = if true_relres.is_finite() {
        true_relres
    } else {
        f64::INFINITY
    };
    accuracy.max_rel_error = true_relres;
    let failure = if accuracy.non_finite > 0 {
        Some(format!(
            "the solution has {} non-finite values",
            accuracy.non_finite
        ))
    } else if !report.converged {
        Some(format!(
            "did not converge: {} iterations, relative residual {:.3e} > tolerance {:e}",
            report.iterations, report.relres, settings.tolerance
        ))
    } else if true_relres > RESIDUAL_SLACK * settings.tolerance {
        Some(format!(
            "the solver reports relative residual {:.3e} after {} iterations, but the true residual of its solution is {:.3e} (> {RESIDUAL_SLACK} x tolerance {:e})",
            report.relres, report.iterations, true_relres, settings.tolerance
        ))
    } else {
        None
    };
    if failure.is_some() {
        accuracy.mismatch_ratio = 1.0;
    }
    Verdict {
        report,
        tolerance: settings.tolerance,
        true_relres,
        accuracy,
        failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{grid::Dims, solve::Method};

    fn tol() -> Tolerance {
        Tolerance {
            atol: 1e-2,
            rtol: 0.0,
            rmse: 2e-3,
            max_mismatch_ratio: 0.0,
        }
    }

    #[test]
    fn a_converged_solve_passes_and_wrong_outputs_fail() {
        let d = Dims::new(8, 8, 8);
        let p = Problem::generate(d, 1);
        let s = Settings {
            max_iterations: 20,
            tolerance: 1e-5,
            sweeps: 2,
        };
        let (x, rep) = reference::solve(Method::Mg, d, &p.b, &s);
        let v = judge(&p, &x, rep, &s, &tol());
        assert!(v.passed(&tol()), "{}", v.summary());
        assert!(v.true_relres <= 1e-5 && v.accuracy.max_rel_error == v.true_relres);
        // A solver that claims convergence with a wrong answer: caught by the true residual.
        let mut wrong = x.clone();
        wrong[100] += 0.5;
        let v = judge(&p, &wrong, rep, &s, &tol());
        assert!(
            !v.passed(&tol()) && !v.accuracy.within(&tol()),
            "{}",
            v.summary()
        );
        assert!(v.failure.unwrap().contains("true residual"));
        // A poisoned (never written) output.
        let mut poisoned = x.clone();
        poisoned[3] = f64::NAN;
        let v = judge(&p, &poisoned, rep, &s, &tol());
        assert!(v.accuracy.non_finite == 1 && !v.accuracy.within(&tol()));
    }

    #[test]
    fn stopping_at_max_iterations_is_a_failure_with_the_reason() {
        let d = Dims::new(16, 16, 16);
        let p = Problem::generate(d, 2);
        let s = Settings {
            max_iterations: 10,
            tolerance: 1e-5,
            sweeps: 2,
        };
        let (x, rep) = reference::solve(Method::Cg, d, &p.b, &s);
        let v = judge(&p, &x, rep, &s, &tol());
        assert!(!v.accuracy.within(&tol()) && v.accuracy.mismatch_ratio == 1.0);
        let f = v.failure.unwrap();
        assert!(
            f.starts_with("did not converge: 10 iterations, relative residual "),
            "{f}"
        );
        assert!(f.ends_with("> tolerance 1e-5"), "{f}");
    }
}
