//! The C++ shim's functions (`shim/trt_shim.cpp`), as a table of function pointers. `build.rs`
//! compiles the shim, and sets `cfg(apex_trt_shim)`, only where TensorRT's headers are found; the
//! table is then filled from the linked symbols. Without it, [`shim`] returns the reason, and
//! every other line of the TensorRT path still compiles everywhere.

use std::ffi::{c_char, c_int, c_void};

/// The shim's `extern "C"` API. Handles are opaque; a null handle or a negative return is an
/// error whose text [`Shim::last_error`] gives.
pub struct Shim {
    pub runtime_create: unsafe extern "C" fn(create_fn: *mut c_void) -> *mut c_void,
    pub runtime_destroy: unsafe extern "C" fn(runtime: *mut c_void),
    pub engine_deserialize:
        unsafe extern "C" fn(runtime: *mut c_void, data: *const c_void, size: usize) -> *mut c_void,
    pub engine_destroy: unsafe extern "C" fn(engine: *mut c_void),
    pub engine_num_io: unsafe extern "C" fn(engine: *mut c_void) -> c_int,
    pub engine_io_name: unsafe extern "C" fn(engine: *mut c_void, index: c_int) -> *const c_char,
    pub engine_io_is_input: unsafe extern "C" fn(engine: *mut c_void, name: *const c_char) -> c_int,
    pub engine_io_dtype: unsafe extern "C" fn(engine: *mut c_void, name: *const c_char) -> c_int,
    pub engine_io_dims: unsafe extern "C" fn(
        engine: *mut c_void,
        name: *const c_char,
        dims: *mut i64,
        max: c_int,
    ) -> c_int,
    pub context_create: unsafe extern "C" fn(engine: *mut c_void) -> *mut c_void,
    pub context_destroy: unsafe extern "C" fn(context: *mut c_void),
    pub context_set_input_shape: unsafe extern "C" fn(
        context: *mut c_void,
        name: *const c_char,
        dims: *const i64,
        nb: c_int,
    ) -> c_int,
    pub context_tensor_dims: unsafe extern "C" fn(
        context: *mut c_void,
        name: *const c_char,
        dims: *mut i64,
        max: c_int,
    ) -> c_int,
    pub context_set_address:
        unsafe extern "C" fn(context: *mut c_void, name: *const c_char, ptr: *mut c_void) -> c_int,
    pub context_enqueue: unsafe extern "C" fn(context: *mut c_void, stream: *mut c_void) -> c_int,
    pub plugin_creator_registered: unsafe extern "C" fn(
        get_registry_fn: *mut c_void,
        name: *const c_char,
        version: *const c_char,
        namespace: *const c_char,
    ) -> c_int,
    pub last_error: unsafe extern "C" fn() -> *const c_char,
}

impl Shim {
    /// The shim's last error message on this thread.
    pub fn last_error(&self) -> String {
        // SAFETY: the shim returns a pointer to a thread-local NUL-terminated buffer (or null).
        let p = unsafe { (self.last_error)() };
        if p.is_null() {
            return "no message".into();
        }
        // SAFETY: non-null, NUL-terminated, valid until the next shim call on this thread.
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    }
}

#[cfg(apex_trt_shim)]
mod linked {
    use super::*;

    unsafe extern "C" {
        fn apex_trt_runtime_create(create_fn: *mut c_void) -> *mut c_void;
        fn apex_trt_runtime_destroy(runtime: *mut c_void);
        fn apex_trt_engine_deserialize(
            runtime: *mut c_void,
            data: *const c_void,
            size: usize,
        ) -> *mut c_void;
        fn apex_trt_engine_destroy(engine: *mut c_void);
        fn apex_trt_engine_num_io(engine: *mut c_void) -> c_int;
        fn apex_trt_engine_io_name(engine: *mut c_void, index: c_int) -> *const c_char;
        fn apex_trt_engine_io_is_input(engine: *mut c_void, name: *const c_char) -> c_int;
        fn apex_trt_engine_io_dtype(engine: *mut c_void, name: *const c_char) -> c_int;
        fn apex_trt_engine_io_dims(
            engine: *mut c_void,
            name: *const c_char,
            dims: *mut i64,
            max: c_int,
        ) -> c_int;
        fn apex_trt_context_create(engine: *mut c_void) -> *mut c_void;
        fn apex_trt_context_destroy(context: *mut c_void);
        fn apex_trt_context_set_input_shape(
            context: *mut c_void,
            name: *const c_char,
            dims: *const i64,
            nb: c_int,
        ) -> c_int;
        fn apex_trt_context_tensor_dims(
            context: *mut c_void,
            name: *const c_char,
            dims: *mut i64,
            max: c_int,
        ) -> c_int;
        fn apex_trt_context_set_address(
            context: *mut c_void,
            name: *const c_char,
            ptr: *mut c_void,
        ) -> c_int;
        fn apex_trt_context_enqueue(context: *mut c_void, stream: *mut c_void) -> c_int;
        fn apex_trt_plugin_creator_registered(
            get_registry_fn: *mut c_void,
            name: *const c_char,
            version: *const c_char,
            namespace: *const c_char,
        ) -> c_int;
        fn apex_trt_last_error() -> *const c_char;
    }

    pub static SHIM: Shim = Shim {
        runtime_create: apex_trt_runtime_create,
        runtime_destroy: apex_trt_runtime_destroy,
        engine_deserialize: apex_trt_engine_deserialize,
        engine_destroy: apex_trt_engine_destroy,
        engine_num_io: apex_trt_engine_num_io,
        engine_io_name: apex_trt_engine_io_name,
        engine_io_is_input: apex_trt_engine_io_is_input,
        engine_io_dtype: apex_trt_engine_io_dtype,
        engine_io_dims: apex_trt_engine_io_dims,
        context_create: apex_trt_context_create,
        context_destroy: apex_trt_context_destroy,
        context_set_input_shape: apex_trt_context_set_input_shape,
        context_tensor_dims: apex_trt_context_tensor_dims,
        context_set_address: apex_trt_context_set_address,
        context_enqueue: apex_trt_context_enqueue,
        plugin_creator_registered: apex_trt_plugin_creator_registered,
        last_error: apex_trt_last_error,
    };
}

/// Where `build.rs` looked for `NvInfer.h` (recorded at build time).
pub const HEADER_SEARCH: &str = env!("APEX_TRT_HEADER_SEARCH");

/// The shim, or why this build has none.
pub fn shim() -> Result<&'static Shim, String> {
    #[cfg(apex_trt_shim)]
    {
        Ok(&linked::SHIM)
    }
    #[cfg(not(apex_trt_shim))]
    {
        Err(format!(
            "tensorrt_shim_not_built: this build found no TensorRT headers (NvInfer.h; looked in: {HEADER_SEARCH}); rebuild with TENSORRT_ROOT set where TensorRT is installed"
        ))
    }
}
