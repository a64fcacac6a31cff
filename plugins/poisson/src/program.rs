//! CUDA source assembly: one program per storage type (`STORE`), every kernel of the three
//! solvers in it. Grid dimensions are kernel arguments, since the multigrid levels share code.

/// The device code of every solver.
pub const SOURCE: &str = include_str!("cuda/poisson.cu");

/// The functions the program exports, in the order [`crate::device`] indexes them.
pub const FUNCTIONS: [&str; 13] = [
    "init_solve",
    "cg_direction",
    "cg_update",
    "rbgs",
    "restrict_residual",
    "prolong_add",
    "coarse_solve",
    "residual_norm",
    "finish",
    "cg_persistent",
    "mg_persistent",
    "cg_resident",
    "cg_final_step",
];

/// The source for storage code `store` (0 fp32, 1 fp16, 2 fp64; [`crate::real::Storage::CUDA_CODE`]).
pub fn source(store: u32) -> String {
    format!("#define STORE {store}\n{SOURCE}")
}
