//! The five ops, one per file (GELU and Swish share [`activation`]), each registered as a kernel.

pub mod activation;
pub mod cross_entropy;
pub mod gelu;
pub mod layer_norm;
pub mod mse_loss;
pub mod swish;

pub use cross_entropy::CrossEntropy;
pub use gelu::Gelu;
pub use layer_norm::LayerNorm;
pub use mse_loss::MseLoss;
pub use swish::Swish;

apex_plugin_api::register_kernel!(crate::case::OpKernel<LayerNorm>);
apex_plugin_api::register_kernel!(crate::case::OpKernel<Gelu>);
apex_plugin_api::register_kernel!(crate::case::OpKernel<Swish>);
apex_plugin_api::register_kernel!(crate::case::OpKernel<MseLoss>);
apex_plugin_api::register_kernel!(crate::case::OpKernel<CrossEntropy>);

#[cfg(test)]
mod tests {
    use apex_plugin_api::KernelRegistration;

    #[test]
    fn all_five_kernels_are_registered_with_graph_capture() {
        let mut ids: Vec<String> = apex_plugin_api::inventory::iter::<KernelRegistration>()
            .map(|r| (r.make)().descriptor())
            .inspect(|d| assert!(d.graph_capturable, "{}", d.id))
            .map(|d| d.id.to_string())
            .collect();
        ids.sort();
        assert_eq!(
            ids,
            [
                "nn_ops.cross_entropy",
                "nn_ops.gelu",
                "nn_ops.layer_norm",
                "nn_ops.mse_loss",
                "nn_ops.swish"
            ]
        );
    }
}
