// The trt_engine plugin's TensorRT shim: a flat `extern "C"` API over TensorRT's C++ runtime
// (deserialize, describe the I/O tensors, set shapes and addresses, enqueueV3, the plugin
// registry). TensorRT exports no C API of its own: its only `extern "C"` entry points are
// `createInferRuntime_INTERNAL` and `getPluginRegistry`, which the Rust side resolves with dlopen
// and passes in, so this file never links libnvinfer. build.rs compiles it only where NvInfer.h
// is found. No C++ exception crosses into Rust: every function catches, records the message
// (`apex_trt_last_error`) and returns null or -1.

#include <NvInfer.h>

#include <cstdint>
#include <exception>
#include <string>

namespace {

thread_local std::string g_error;

void set_error(const char* what) {
  try {
    g_error = what ? what : "unknown error";
  } catch (...) {
  }
}

// Records TensorRT's errors so that a failed call returns its message.
class Logger : public nvinfer1::ILogger {
 public:
  void log(Severity severity, const char* msg) noexcept override {
    if (severity <= Severity::kERROR) set_error(msg);
  }
};

Logger& logger() {
  static Logger instance;
  return instance;
}

using CreateRuntimeFn = void* (*)(void* logger, int32_t version);
using GetRegistryFn = nvinfer1::IPluginRegistry* (*)();

template <typename F>
auto guarded(F f, decltype(f()) on_error) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    set_error(e.what());
  } catch (...) {
    set_error("unknown C++ exception");
  }
  return on_error;
}

int copy_dims(const nvinfer1::Dims& d, int64_t* out, int max) {
  if (d.nbDims < 0) return -1;
  for (int i = 0; i < d.nbDims && i < max; ++i) out[i] = static_cast<int64_t>(d.d[i]);
  return d.nbDims;
}

nvinfer1::ICudaEngine* engine_of(void* e) { return static_cast<nvinfer1::ICudaEngine*>(e); }
nvinfer1::IExecutionContext* context_of(void* c) {
  return static_cast<nvinfer1::IExecutionContext*>(c);
}

}  // namespace

extern "C" {

const char* apex_trt_last_error() { return g_error.c_str(); }

void* apex_trt_runtime_create(void* create_fn) {
  return guarded(
      [&]() -> void* {
        auto create = reinterpret_cast<CreateRuntimeFn>(create_fn);
        void* runtime =
            create(static_cast<void*>(static_cast<nvinfer1::ILogger*>(&logger())), NV_TENSORRT_VERSION);
        if (!runtime)
          set_error("createInferRuntime returned null: libnvinfer does not match the headers this shim was built with");
        return runtime;
      },
      nullptr);
}

void apex_trt_runtime_destroy(void* runtime) {
  guarded([&]() -> int { delete static_cast<nvinfer1::IRuntime*>(runtime); return 0; }, 0);
}

void* apex_trt_engine_deserialize(void* runtime, const void* data, size_t size) {
  return guarded(
      [&]() -> void* {
        g_error.clear();
        void* engine = static_cast<nvinfer1::IRuntime*>(runtime)->deserializeCudaEngine(data, size);
        if (!engine && g_error.empty()) set_error("deserializeCudaEngine returned null");
        return engine;
      },
      nullptr);
}

void apex_trt_engine_destroy(void* engine) {
  guarded([&]() -> int { delete engine_of(engine); return 0; }, 0);
}

int apex_trt_engine_num_io(void* engine) {
  return guarded([&]() -> int { return engine_of(engine)->getNbIOTensors(); }, -1);
}

const char* apex_trt_engine_io_name(void* engine, int index) {
  return guarded([&]() -> const char* { return engine_of(engine)->getIOTensorName(index); }, nullptr);
}

int apex_trt_engine_io_is_input(void* engine, const char* name) {
  return guarded(
      [&]() -> int {
        return engine_of(engine)->getTensorIOMode(name) == nvinfer1::TensorIOMode::kINPUT ? 1 : 0;
      },
      -1);
}

int apex_trt_engine_io_dtype(void* engine, const char* name) {
  return guarded([&]() -> int { return static_cast<int>(engine_of(engine)->getTensorDataType(name)); }, -1);
}

int apex_trt_engine_io_dims(void* engine, const char* name, int64_t* dims, int max) {
  return guarded([&]() -> int { return copy_dims(engine_of(engine)->getTensorShape(name), dims, max); }, -1);
}

void* apex_trt_context_create(void* engine) {
  return guarded(
      [&]() -> void* {
        void* context = engine_of(engine)->createExecutionContext();
        if (!context) set_error("createExecutionContext returned null");
        return context;
      },
      nullptr);
}

void apex_trt_context_destroy(void* context) {
  guarded([&]() -> int { delete context_of(context); return 0; }, 0);
}

int apex_trt_context_set_input_shape(void* context, const char* name, const int64_t* dims, int nb) {
  return guarded(
      [&]() -> int {
        if (nb < 0 || nb > nvinfer1::Dims::MAX_DIMS) {
          set_error("too many dimensions");
          return -1;
        }
        nvinfer1::Dims d{};
        d.nbDims = nb;
        for (int i = 0; i < nb; ++i) d.d[i] = dims[i];
        return context_of(context)->setInputShape(name, d) ? 0 : -1;
      },
      -1);
}

int apex_trt_context_tensor_dims(void* context, const char* name, int64_t* dims, int max) {
  return guarded([&]() -> int { return copy_dims(context_of(context)->getTensorShape(name), dims, max); }, -1);
}

int apex_trt_context_set_address(void* context, const char* name, void* ptr) {
  return guarded([&]() -> int { return context_of(context)->setTensorAddress(name, ptr) ? 0 : -1; }, -1);
}

int apex_trt_context_enqueue(void* context, void* stream) {
  return guarded(
      [&]() -> int {
        g_error.clear();
        bool ok = context_of(context)->enqueueV3(static_cast<cudaStream_t>(stream));
        if (!ok && g_error.empty()) set_error("enqueueV3 returned false");
        return ok ? 0 : -1;
      },
      -1);
}

int apex_trt_plugin_creator_registered(void* get_registry_fn, const char* name, const char* version,
                                       const char* plugin_namespace) {
  return guarded(
      [&]() -> int {
        auto get_registry = reinterpret_cast<GetRegistryFn>(get_registry_fn);
        nvinfer1::IPluginRegistry* registry = get_registry();
        if (!registry) {
          set_error("getPluginRegistry returned null");
          return -1;
        }
#if NV_TENSORRT_MAJOR >= 10
        return registry->getCreator(name, version, plugin_namespace) ? 1 : 0;
#else
        return registry->getPluginCreator(name, version, plugin_namespace) ? 1 : 0;
#endif
      },
      -1);
}

}  // extern "C"
