// The device entry points (device.hpp): a registry kernel run on a caller's
// device pointers and stream, and the scoped host registration.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>

#include "engine/cuda/kernel_choice.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/cuda_check.hpp"
#include "gtranspose/device.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/kernels.hpp"
#include "gtranspose/memory.hpp"

namespace gt {
namespace {

[[noreturn]] void usage(const char* api, const std::string& what) {
  throw Error(ErrorKind::usage, std::string(api) + ": " + what);
}

// The GPU that holds p (device or managed memory).
int device_of(const char* api, const char* what, const void* p) {
  if (!p) usage(api, std::string(what) + " is a null pointer");
  std::string why;
  if (cuda_device_count(&why) == 0) throw Error(ErrorKind::no_device, std::string(api) + ": " + why);
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // CUDA 10 and older fail for plain host memory
    a.type = cudaMemoryTypeUnregistered;
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
    usage(api, std::string(what) + " is not GPU memory: pass device arrays here (host arrays go to gt::transpose)");
  return a.device;
}

// [begin, end) of a matrix in device memory, checked as host matrices are.
struct Span {
  std::uintptr_t begin, end;
};
Span span_of(const char* api, const char* what, const void* p, std::uint64_t rows, std::uint64_t cols,
             std::size_t es, std::uint64_t ld) {
  if (rows == 0 || cols == 0)
    usage(api, std::string("the ") + what + " is empty (" + to_string(Shape{rows, cols}) + ")");
  if (!supported_elem_size(es))
    usage(api, "unsupported element size " + std::to_string(es) + " bytes (use 1, 2, 4, 8 or 16)");
  if (ld && ld < cols)
    usage(api, std::string("the ") + what + "'s leading dimension " + std::to_string(ld) + " is less than its " +
                   std::to_string(cols) + " columns");
  const std::uint64_t bytes = host_matrix_span(HostMatrix{const_cast<void*>(p), {rows, cols}, es, ld});
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  if (bytes > UINTPTR_MAX - b) usage(api, std::string("the ") + what + " runs past the end of the address space");
  return {b, b + bytes};
}

// Runs the launch on the GPU that holds the data, and leaves the caller's
// current device as it was (a binding's host library keeps its own notion
// of the current device in the same thread).
class OnDevice {
 public:
  explicit OnDevice(int device) {
    GT_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) GT_CUDA_CHECK(cudaSetDevice(device));
  }
  ~OnDevice() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
    cudaGetLastError();
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int previous_ = 0;
};

cudaStream_t stream_of(const DeviceOptions& o) { return reinterpret_cast<cudaStream_t>(o.stream); }

// The checks both out-of-place calls share: the GPU both matrices are on.
int check_pair(const char* api, const void* in, const void* out, std::uint64_t rows, std::uint64_t cols,
               std::size_t es, const DeviceOptions& o, bool transposed) {
  const int din = device_of(api, "in", in);
  const int dout = device_of(api, "out", out);
  if (din != dout)
    usage(api, "in is on GPU " + std::to_string(din) + " and out on GPU " + std::to_string(dout) +
                   ": give both on the same GPU");
  const Span si = span_of(api, "input", in, rows, cols, es, o.ld_in);
  const Span so = transposed ? span_of(api, "output", out, cols, rows, es, o.ld_out)
                             : span_of(api, "output", out, rows, cols, es, o.ld_out);
  if (si.begin < so.end && so.begin < si.end)
    usage(api, "in and out overlap: give the output its own memory (square matrices transpose in place)");
  return din;
}

}  // namespace

std::string transpose_device(const void* in, void* out, std::uint64_t rows, std::uint64_t cols,
                             std::size_t elem_size, const DeviceOptions& opts) {
  const char* api = "gt::transpose_device";
  const int device = check_pair(api, in, out, rows, cols, elem_size, opts, true);
  const kernels::KernelInfo& k = cuda::pick_kernel(opts.kernel, elem_size, kernels::Kind::transpose);
  OnDevice on(device);
  // The kernel checks the problem (and alignment) itself, naming the kernel.
  k.launch(in, out, kernels::Problem{rows, cols, elem_size, opts.ld_in, opts.ld_out}, stream_of(opts));
  return k.name;
}

std::string transpose_device_inplace(void* data, std::uint64_t n, std::size_t elem_size, const DeviceOptions& opts) {
  return transpose_device_inplace(data, n, n, elem_size, opts);
}

std::string transpose_device_inplace(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                                     const DeviceOptions& opts) {
  const char* api = "gt::transpose_device_inplace";
  const int device = device_of(api, "data", data);
  if (opts.ld_out && opts.ld_out != (opts.ld_in ? opts.ld_in : cols))
    usage(api, "ld_out differs from ld_in: in place, the matrix has one leading dimension (leave ld_out 0)");
  (void)span_of(api, "matrix", data, rows, cols, elem_size, opts.ld_in);
  // The kernel checks the problem (a rectangle's packed rows too) itself. auto: the tuned square kernel for a square, inplace-rect for a rectangle.
  const kernels::KernelInfo& k = rows != cols && (opts.kernel.empty() || opts.kernel == "auto")
                                     ? *kernels::find("inplace-rect")
                                     : cuda::pick_kernel(opts.kernel, elem_size, kernels::Kind::inplace);
  OnDevice on(device);
  k.launch(data, nullptr, kernels::Problem{rows, cols, elem_size, opts.ld_in, 0}, stream_of(opts));
  return k.name;
}

void copy_device(const void* in, void* out, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                 const DeviceOptions& opts) {
  const char* api = "gt::copy_device";
  const int device = check_pair(api, in, out, rows, cols, elem_size, opts, false);
  OnDevice on(device);
  const std::size_t row_bytes = cols * elem_size;
  GT_CUDA_CHECK(cudaMemcpy2DAsync(out, (opts.ld_out ? opts.ld_out : cols) * elem_size, in,
                                  (opts.ld_in ? opts.ld_in : cols) * elem_size, row_bytes, rows,
                                  cudaMemcpyDeviceToDevice, stream_of(opts)));
}

HostRegistration::HostRegistration(void* p, std::size_t bytes) {
  if (!p || bytes == 0) {
    why_ = "nothing to register";
    return;
  }
  if (cuda_device_count(&why_) == 0) return;
  const cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
  if (e != cudaSuccess) {
    cudaGetLastError();
    why_ = std::string("cudaHostRegister failed: ") + cudaGetErrorString(e);
    return;
  }
  p_ = p;
}

HostRegistration::~HostRegistration() {
  if (p_ && cudaHostUnregister(p_) != cudaSuccess) cudaGetLastError();
}

HostRegistration::HostRegistration(HostRegistration&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), why_(std::move(o.why_)) {}

HostRegistration& HostRegistration::operator=(HostRegistration&& o) noexcept {
  if (this != &o) {
    if (p_ && cudaHostUnregister(p_) != cudaSuccess) cudaGetLastError();
    p_ = std::exchange(o.p_, nullptr);
    why_ = std::move(o.why_);
  }
  return *this;
}

}  // namespace gt
