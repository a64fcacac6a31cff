//! The plain-Rust traits a plugin author implements. The FFI adapters in [`crate::ffi`] wrap them.

use crate::{Accuracy, Figure, KernelDescriptor, PluginError, SetupRequest, Tolerance, Work};

/// A benchmarkable kernel: a descriptor, and a factory of set-up instances (one per case).
pub trait Kernel: Send + Sync + 'static {
    fn descriptor(&self) -> KernelDescriptor;

    /// Allocates and fills the inputs of one case (params × backend × precision × seed).
    /// Compile CUDA code and allocate here: setup is never inside a measurement.
    fn setup(&self, request: &SetupRequest) -> Result<Box<dyn Instance>, PluginError>;

    /// Why this case cannot run on this machine, when the kernel can tell before setting it up:
    /// a runtime library that is not installed, an input file that does not exist, a model whose
    /// input shapes the case leaves unresolved. The host then reports the case `skipped` with
    /// this one-line reason and never calls [`setup`](Self::setup). `None` (the default): the
    /// case runs, and anything that goes wrong in it is a failure, not a skip.
    fn unavailable(&self, request: &SetupRequest) -> Option<String> {
        let _ = request;
        None
    }
}

/// One set-up case. The host owns timing; an instance never times itself.
pub trait Instance: Send {
    /// The logical work of one `run`, from the kernel's cost model.
    fn work(&self) -> Work;

    /// Performs one call. For CUDA: enqueue on the host's stream, without synchronizing or allocating.
    fn run(&mut self) -> Result<(), PluginError>;

    /// Regenerates every input from `seed` and fills every output with a poison value (NaN for
    /// floats, a sentinel for integers), so that a kernel that leaves output unwritten is caught.
    fn prepare_check(&mut self, seed: u64) -> Result<(), PluginError>;

    /// Compares the output of the last `run` (the host has synchronized) with the kernel's own
    /// reference, computed on the CPU in higher precision from the current inputs.
    fn verify(&mut self, tolerance: &Tolerance) -> Result<Accuracy, PluginError>;

    /// DRAM-cold batch timing: make `sets` independent copies of every buffer a call reads or
    /// writes (set 0 is the one the instance already has; the copies hold the same inputs), and
    /// from then on let each `run` use the next set, round-robin. The host asks for enough sets
    /// to exceed the device's L2 several times over, so a batch of calls streams from DRAM
    /// instead of re-reading a cache-resident working set. Allocate here, never in `run`.
    ///
    /// [`prepare_check`](Self::prepare_check) regenerates and poisons set 0 and makes the next
    /// `run` use set 0, so verification reads what it always read.
    ///
    /// Returns the number of sets now in use. The default, 1, means "not supported": the host
    /// then labels the batch figure L2-hot. Returning fewer sets than asked (memory) is fine.
    fn rotate(&mut self, sets: u32) -> Result<u32, PluginError> {
        let _ = sets;
        Ok(1)
    }

    /// Why the last [`verify`](Self::verify) failed, in the kernel's own words, when the numbers
    /// of [`Accuracy`] do not say it (a solver that stopped at its iteration cap: "did not
    /// converge: 50 iterations, relative residual 2.4e-4 > tolerance 1e-5"). The host puts it
    /// first in the case's reason. Empty (the default) when there is nothing to add.
    fn verify_note(&self) -> String {
        String::new()
    }

    /// Figures about the calls that the host cannot derive (see [`Figure`]): what the last
    /// call selected, a solver's iterations, a runtime's own phase times. Asked once, after
    /// the accuracy check, so a per-call figure describes that call on fresh inputs. Empty
    /// (the default) when the kernel has none. A malformed figure fails the case with its
    /// reason, so a report never carries a figure nobody can read.
    fn figures(&self) -> Vec<Figure> {
        Vec::new()
    }

    /// Sentences about the calls that are not numbers, one line each, asked once after
    /// [`figures`](Self::figures): what an engine runtime warned about (trtexec's "GPU compute
    /// time is unstable, …"), which of its fields are absent and why, which provider ran, what
    /// the output was verified against. The host puts them in the case's `notes`. Empty (the
    /// default) when the kernel has nothing to say.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}
