//! The bench's profiles: the LLM-sized grid (LayerNorm under every schedule, the activations,
//! cross-entropy under every gradient plan), the seed's 2 M-element shape, and MSE under every
//! launch shape it compares.

use apex_plugin_api::{Kernel, ParamValue, Precision};
use apex_plugin_nn_ops::{
    case::OpKernel,
    ops::{
        CrossEntropy, Gelu, LayerNorm, MseLoss, Swish, cross_entropy::tuning::GradPlan,
        layer_norm::tuning::Schedule, mse_loss::tuning::Launch as MseLaunch,
    },
    self_check::Variant,
};

/// A label, the kernel, its parameter overrides, the precision and the launch plan.
pub type Profile = (
    &'static str,
    Box<dyn Kernel>,
    Vec<(&'static str, ParamValue)>,
    Precision,
    Variant,
);

pub fn profiles() -> Vec<Profile> {
    let bsd = |b: i64, s: i64, d: i64| apex_plugin_nn_ops::harness::bsd(b, s, d);
    let with = |mut o: Vec<(&'static str, ParamValue)>, k: &'static str, v: ParamValue| {
        o.push((k, v));
        o
    };
    let mut out: Vec<Profile> = Vec::new();
    for precision in [Precision::Bf16, Precision::Fp32] {
        for dim in [512, 1024, 2048, 4096, 8192] {
            // The default (the schedule `Schedule::for_row` picks), then each by name.
            let variants =
                std::iter::once(Variant::Default).chain(Schedule::ALL.map(Variant::LayerNorm));
            for variant in variants {
                out.push((
                    "layer_norm",
                    Box::new(OpKernel::<LayerNorm>::default()),
                    bsd(1, 8192, dim),
                    precision,
                    variant,
                ));
            }
        }
        for dim in [4096, 8192] {
            out.push((
                "gelu",
                Box::new(OpKernel::<Gelu>::default()),
                bsd(1, 8192, dim),
                precision,
                Variant::Default,
            ));
            out.push((
                "gelu_tanh",
                Box::new(OpKernel::<Gelu>::default()),
                with(
                    bsd(1, 8192, dim),
                    "approximate",
                    ParamValue::Str("tanh".into()),
                ),
                precision,
                Variant::Default,
            ));
            out.push((
                "swish",
                Box::new(OpKernel::<Swish>::default()),
                bsd(1, 8192, dim),
                precision,
                Variant::Default,
            ));
        }
        for vocab in [32_768, 131_072, 262_144] {
            // The forward, then the forward + gradient under the default plan and, for
            // comparison, every other plan of `tuning::GradPlan` (resident, shared memory at
            // each slice budget).
            let grad_variants = GradPlan::ALL
                .into_iter()
                .filter(|&p| p != GradPlan::DEFAULT)
                .map(|p| (true, "cross_entropy+grad", Variant::Grad(p)));
            let variants = [
                (false, "cross_entropy", Variant::Default),
                (true, "cross_entropy+grad", Variant::Default),
            ]
            .into_iter()
            .chain(grad_variants);
            for (grad, label, variant) in variants {
                out.push((
                    label,
                    Box::new(OpKernel::<CrossEntropy>::default()),
                    vec![
                        ("rows", ParamValue::Int(4096)),
                        ("vocab", ParamValue::Int(vocab)),
                        ("grad", ParamValue::Bool(grad)),
                    ],
                    precision,
                    variant,
                ));
            }
        }
    }
    // The seed's 2 M-element shape (16 x 256 x 512).
    for precision in [Precision::Bf16, Precision::Fp32] {
        out.push((
            "layer_norm",
            Box::new(OpKernel::<LayerNorm>::default()),
            bsd(16, 256, 512),
            precision,
            Variant::Default,
        ));
        out.push((
            "gelu",
            Box::new(OpKernel::<Gelu>::default()),
            bsd(16, 256, 512),
            precision,
            Variant::Default,
        ));
        out.push((
            "swish",
            Box::new(OpKernel::<Swish>::default()),
            bsd(16, 256, 512),
            precision,
            Variant::Default,
        ));
        out.push((
            "cross_entropy",
            Box::new(OpKernel::<CrossEntropy>::default()),
            vec![
                ("rows", ParamValue::Int(4096)),
                ("vocab", ParamValue::Int(512)),
            ],
            precision,
            Variant::Default,
        ));
    }
    // MSE at every type over the large grid's rows, the seed's shape and a tiny one, under its
    // default launch and each other launch shape (`mse_loss::tuning::Launch::OTHERS`).
    for precision in [Precision::Bf16, Precision::Fp16, Precision::Fp32] {
        for (b, s, d) in [
            (1, 8192, 1024),
            (1, 8192, 4096),
            (1, 8192, 8192),
            (16, 256, 512),
            (128, 256, 8),
        ] {
            let variants =
                std::iter::once(Variant::Default).chain(MseLaunch::OTHERS.map(Variant::Mse));
            for variant in variants {
                out.push((
                    "mse_loss",
                    Box::new(OpKernel::<MseLoss>::default()),
                    bsd(b, s, d),
                    precision,
                    variant,
                ));
            }
        }
    }
    out
}
