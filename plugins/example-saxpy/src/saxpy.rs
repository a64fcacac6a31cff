//! `example.saxpy`: `y[i] = a * x[i] + y0[i]` over `n` fp32 elements.

use apex_plugin_api::{
    Accuracy, Backend, Instance, Kernel, KernelDescriptor, ParamSpec, PluginError, Precision,
    SetupRequest, Tolerance, Work, WorkUnit, compare_outputs, register_kernel,
};

/// The kernel: a factory of [`SaxpyCase`]s.
#[derive(Default)]
pub struct Saxpy;

register_kernel!(Saxpy);

impl Kernel for Saxpy {
    fn descriptor(&self) -> KernelDescriptor {
        KernelDescriptor::new(
            "example.saxpy",
            "y = a*x + y over n fp32 elements (template plugin)",
        )
        .backends(&[Backend::Cpu])
        .precisions(&[Precision::Fp32])
        .param(ParamSpec::int("n", 1 << 20, "number of elements"))
        .param(ParamSpec::float("a", 2.0, "the scalar a"))
        // One rounding of a fused multiply-add: well inside 2 ulp of fp32.
        .tolerance(
            Precision::Fp32,
            Tolerance {
                atol: 1e-6,
                rtol: 2.4e-7,
                rmse: 1e-6,
                max_mismatch_ratio: 0.0,
            },
        )
    }

    fn setup(&self, request: &SetupRequest) -> Result<Box<dyn Instance>, PluginError> {
        if request.backend != Backend::Cpu || request.precision != Precision::Fp32 {
            return Err(PluginError::invalid(
                "example.saxpy runs only on cpu in fp32",
            ));
        }
        let n = request.params.usize("n")?;
        let a = request.params.float("a")? as f32;
        let mut case = SaxpyCase {
            a,
            x: vec![0.0; n],
            y0: vec![0.0; n],
            y: vec![0.0; n],
        };
        case.fill(request.seed);
        Ok(Box::new(case))
    }
}

/// One set-up case: inputs `x`, `y0` and the output `y`.
pub struct SaxpyCase {
    a: f32,
    x: Vec<f32>,
    y0: Vec<f32>,
    y: Vec<f32>,
}

impl SaxpyCase {
    /// Deterministic inputs in [-1, 1) from `seed` (a SplitMix64 stream; no dependency needed).
    fn fill(&mut self, seed: u64) {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        self.x.iter_mut().for_each(|v| *v = next());
        self.y0.iter_mut().for_each(|v| *v = next());
    }
}

impl Instance for SaxpyCase {
    fn work(&self) -> Work {
        let n = self.x.len() as u64;
        Work {
            bytes_read: 8 * n,
            bytes_written: 4 * n,
            flops: 2.0 * n as f64,
            items: n as f64,
            unit: WorkUnit::Elements,
        }
    }

    fn run(&mut self) -> Result<(), PluginError> {
        let a = self.a;
        for ((y, &x), &y0) in self.y.iter_mut().zip(&self.x).zip(&self.y0) {
            *y = a.mul_add(x, y0);
        }
        Ok(())
    }

    fn prepare_check(&mut self, seed: u64) -> Result<(), PluginError> {
        self.fill(seed);
        self.y.iter_mut().for_each(|v| *v = f32::NAN);
        Ok(())
    }

    fn verify(&mut self, tolerance: &Tolerance) -> Result<Accuracy, PluginError> {
        let a = f64::from(self.a);
        let reference: Vec<f64> = self
            .x
            .iter()
            .zip(&self.y0)
            .map(|(&x, &y0)| a * f64::from(x) + f64::from(y0))
            .collect();
        let output: Vec<f64> = self.y.iter().map(|&v| f64::from(v)).collect();
        Ok(compare_outputs(&output, &reference, tolerance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apex_plugin_api::{ParamValue, Params};

    fn case(n: i64) -> Box<dyn Instance> {
        let mut params = Params::default();
        params.push("n", ParamValue::Int(n));
        params.push("a", ParamValue::Float(1.5));
        let request = SetupRequest {
            params,
            backend: Backend::Cpu,
            precision: Precision::Fp32,
            seed: 7,
            cuda: abi_stable::std_types::ROption::RNone,
        };
        Saxpy.setup(&request).unwrap()
    }

    #[test]
    fn fresh_inputs_verify_against_the_f64_reference() {
        let tol = Saxpy.descriptor().tolerance_for(Precision::Fp32);
        let mut c = case(1000);
        c.prepare_check(99).unwrap();
        c.run().unwrap();
        let acc = c.verify(&tol).unwrap();
        assert!(acc.within(&tol), "{acc:?}");
    }

    #[test]
    fn an_unwritten_output_fails_verification() {
        let tol = Saxpy.descriptor().tolerance_for(Precision::Fp32);
        let mut c = case(10);
        c.prepare_check(1).unwrap();
        let acc = c.verify(&tol).unwrap();
        assert_eq!(acc.non_finite, 10);
        assert!(!acc.within(&tol));
    }
}
