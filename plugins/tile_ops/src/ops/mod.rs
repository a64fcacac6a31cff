//! The four tile ops, one per file, each registered as a kernel.

pub mod fused_stage;
pub mod fusion_gate;
pub mod tile_pack;
pub mod tile_unpack;

pub use fused_stage::FusedStage;
pub use fusion_gate::FusionGate;
pub use tile_pack::TilePack;
pub use tile_unpack::TileUnpack;

apex_plugin_api::register_kernel!(crate::case::OpKernel<TilePack>);
apex_plugin_api::register_kernel!(crate::case::OpKernel<TileUnpack>);
apex_plugin_api::register_kernel!(crate::case::OpKernel<FusionGate>);
apex_plugin_api::register_kernel!(crate::case::OpKernel<FusedStage>);

#[cfg(test)]
mod tests {
    use apex_plugin_api::KernelRegistration;

    #[test]
    fn all_four_kernels_are_registered_with_graph_capture() {
        let mut ids: Vec<String> = apex_plugin_api::inventory::iter::<KernelRegistration>()
            .map(|r| (r.make)().descriptor())
            .inspect(|d| assert!(d.graph_capturable, "{}", d.id))
            .map(|d| d.id.to_string())
            .collect();
        ids.sort();
        assert_eq!(
            ids,
            [
                "tile_ops.fused_stage",
                "tile_ops.fusion_gate",
                "tile_ops.tile_pack",
                "tile_ops.tile_unpack"
            ]
        );
    }
}
