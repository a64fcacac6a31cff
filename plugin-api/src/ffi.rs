//! The ABI-stable trait objects the host calls, and the adapters that implement them over the
//! plain-Rust [`Kernel`]/[`Instance`] traits. Every adapter method runs the author's code inside
//! `catch_unwind`, so a panic becomes an [`ErrorKind::Panicked`](crate::ErrorKind) error value
//! instead of aborting the process at the FFI boundary.

use abi_stable::{
    sabi_extern_fn, sabi_trait,
    sabi_trait::TD_Opaque,
    std_types::{RBox, RErr, ROk, RResult, RString, RVec},
};
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use crate::{
    Accuracy, Figure, Instance, Kernel, KernelDescriptor, KernelRegistration, PluginError,
    SetupRequest, Tolerance, Work,
};

/// A kernel as the host sees it. Methods may only be appended after `setup`.
#[sabi_trait]
pub trait FfiKernel: Send + Sync {
    fn descriptor(&self) -> RResult<KernelDescriptor, PluginError>;

    #[sabi(last_prefix_field)]
    fn setup(&self, request: &SetupRequest) -> RResult<FfiInstanceBox, PluginError>;

    /// Appended in ABI 4: why the case cannot run here ([`Kernel::unavailable`]); empty when
    /// it can.
    fn unavailable(&self, request: &SetupRequest) -> RString;
}

/// A set-up case as the host sees it. Methods may only be appended after `rotate`.
#[sabi_trait]
pub trait FfiInstance: Send {
    fn work(&self) -> RResult<Work, PluginError>;
    fn run(&mut self) -> RResult<(), PluginError>;
    fn prepare_check(&mut self, seed: u64) -> RResult<(), PluginError>;

    #[sabi(last_prefix_field)]
    fn verify(&mut self, tolerance: &Tolerance) -> RResult<Accuracy, PluginError>;

    /// Appended in ABI 2: DRAM-cold batch buffers ([`Instance::rotate`]).
    fn rotate(&mut self, sets: u32) -> RResult<u32, PluginError>;

    /// Appended in ABI 2: the kernel's sentence on a failed verification
    /// ([`Instance::verify_note`]).
    fn verify_note(&self) -> RString;

    /// Appended in ABI 3: figures the host cannot derive ([`Instance::figures`]).
    fn figures(&self) -> RResult<RVec<Figure>, PluginError>;

    /// Appended in ABI 4: the kernel's sentences about its calls ([`Instance::notes`]).
    fn notes(&self) -> RResult<RVec<RString>, PluginError>;
}

pub type FfiKernelBox = FfiKernel_TO<'static, RBox<()>>;
pub type FfiInstanceBox = FfiInstance_TO<'static, RBox<()>>;

thread_local! {
    /// Whether this thread is inside [`guard`], and where the last panic there happened.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A plugin links its own copy of std, so its panics go to its own panic hook. Inside [`guard`]
/// that hook records the location instead of printing: the panic becomes an error value that
/// carries the location, and the host reports it once. Outside, the previous hook runs.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                LAST_PANIC_AT.with(|p| *p.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning both its error and a panic into an error value.
fn guard<T>(f: impl FnOnce() -> Result<T, PluginError>) -> RResult<T, PluginError> {
    install_panic_hook();
    let was_guarded = GUARDED.with(|g| g.replace(true));
    let outcome = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(was_guarded));
    match outcome {
        Ok(Ok(v)) => ROk(v),
        Ok(Err(e)) => RErr(e),
        Err(payload) => {
            let mut e = PluginError::from_panic(payload);
            if let Some(at) = LAST_PANIC_AT.with(|p| p.borrow_mut().take()) {
                e.message = format!("{} (at {at})", e.message).into();
            }
            RErr(e)
        }
    }
}

struct KernelAdapter(Box<dyn Kernel>);

impl FfiKernel for KernelAdapter {
    fn descriptor(&self) -> RResult<KernelDescriptor, PluginError> {
        guard(|| Ok(self.0.descriptor()))
    }

    fn setup(&self, request: &SetupRequest) -> RResult<FfiInstanceBox, PluginError> {
        guard(|| {
            let instance = self.0.setup(request)?;
            Ok(FfiInstance_TO::from_value(
                InstanceAdapter(instance),
                TD_Opaque,
            ))
        })
    }

    fn unavailable(&self, request: &SetupRequest) -> RString {
        // A panic while deciding is not a reason to skip: the case then runs, and setup
        // reports what is wrong.
        guard(|| Ok(self.0.unavailable(request).unwrap_or_default()))
            .unwrap_or_default()
            .into()
    }
}

struct InstanceAdapter(Box<dyn Instance>);

impl FfiInstance for InstanceAdapter {
    fn work(&self) -> RResult<Work, PluginError> {
        guard(|| Ok(self.0.work()))
    }
    fn run(&mut self) -> RResult<(), PluginError> {
        guard(|| self.0.run())
    }
    fn prepare_check(&mut self, seed: u64) -> RResult<(), PluginError> {
        guard(|| self.0.prepare_check(seed))
    }
    fn verify(&mut self, tolerance: &Tolerance) -> RResult<Accuracy, PluginError> {
        guard(|| self.0.verify(tolerance))
    }
    fn rotate(&mut self, sets: u32) -> RResult<u32, PluginError> {
        guard(|| self.0.rotate(sets))
    }
    fn verify_note(&self) -> RString {
        // The note is optional: a panic while writing it leaves it empty.
        guard(|| Ok(self.0.verify_note()))
            .unwrap_or_default()
            .into()
    }
    fn figures(&self) -> RResult<RVec<Figure>, PluginError> {
        guard(|| Ok(self.0.figures().into()))
    }
    fn notes(&self) -> RResult<RVec<RString>, PluginError> {
        guard(|| Ok(self.0.notes().into_iter().map(RString::from).collect()))
    }
}

/// Wraps a plain-Rust kernel in its ABI-stable trait object.
pub fn into_ffi(kernel: Box<dyn Kernel>) -> FfiKernelBox {
    FfiKernel_TO::from_value(KernelAdapter(kernel), TD_Opaque)
}

/// The root module's `kernels` entry: every kernel registered in this plugin with
/// [`register_kernel!`](crate::register_kernel). A panicking constructor becomes an error.
#[sabi_extern_fn]
pub fn collect_registered_kernels() -> RResult<RVec<FfiKernelBox>, PluginError> {
    guard(|| {
        Ok(inventory::iter::<KernelRegistration>
            .into_iter()
            .map(|r| into_ffi((r.make)()))
            .collect())
    })
}
