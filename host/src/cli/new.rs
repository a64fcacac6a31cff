//! `apex-host new NAME [--cuda] [--root DIR]`: scaffolds `plugins/NAME/` (crate::scaffold) and
//! says what to run next.

use std::path::PathBuf;

use super::exit_codes::ApexExitCode;
use crate::report::term::errln;

#[derive(Debug, Clone, clap::Args)]
pub struct NewArgs {
    /// The plugin family: lowercase letters, digits and `_` (its kernels are `NAME.<op>`).
    pub name: String,
    /// Also write the kernel in CUDA (NVRTC), beside the CPU one.
    #[arg(long)]
    pub cuda: bool,
    /// The checkout to add the plugin to [default: the nearest ancestor of the current folder
    /// with `plugins/` and `Cargo.toml`].
    #[arg(long, value_name = "DIR", env = "APEX_ROOT")]
    pub root: Option<PathBuf>,
}

pub fn exec(args: &NewArgs) -> i32 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = args
        .root
        .clone()
        .or_else(|| crate::discovery::find_project_root(&cwd))
        .unwrap_or(cwd);
    match crate::scaffold::scaffold(&root, &args.name, args.cuda) {
        Ok(files) => {
            for f in &files {
                errln!("wrote {}", f.display());
            }
            errln!(
                "next: `apex-host discover --verbose` lists {name}.scale; `apex-host run --filter '{name}.*'` builds and measures it",
                name = args.name
            );
            ApexExitCode::OK
        }
        Err(e) => {
            errln!("error: {e}");
            ApexExitCode::USAGE
        }
    }
}
