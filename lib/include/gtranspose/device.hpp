// Entry points for matrices that already lie in GPU memory (a CuPy array, a
// PyTorch tensor, anything a binding can take a device pointer from), and a
// scoped registration that lets the host-memory API (host.hpp) DMA a
// program's ordinary memory directly.
//
//   gt::DeviceOptions o;
//   o.stream = reinterpret_cast<std::uintptr_t>(s);   // the caller's cudaStream_t
//   gt::transpose_device(in, out, rows, cols, sizeof(float), o);  // out = in^T, queued on s
//
// The kernel runs on the caller's stream, in the caller's memory, and the
// call returns once it is queued, as a CUDA library call does: the caller
// orders what comes after on that stream. Every function exists in a
// CPU-only build too, where it throws gt::Error(no_device).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gt {

struct DeviceOptions {
  std::uint64_t ld_in = 0;   // elements from one input row to the next (0: packed)
  std::uint64_t ld_out = 0;  // elements from one output row to the next (0: packed)
  // A cudaStream_t, as the caller's library holds it; 0 is the default
  // stream, 1 and 2 CUDA's cudaStreamLegacy and cudaStreamPerThread.
  std::uintptr_t stream = 0;
  std::string kernel = "auto";  // a registry name; "auto": the fastest for the element size
};

// out (cols x rows, ld_out) = transpose of in (rows x cols, ld_in), both in
// the memory of one GPU (device or managed memory; the kernel runs on that
// GPU, the caller's current device is left as it was). Returns the kernel's
// name. Throws gt::Error(usage) for a bad argument (null or host pointers,
// pointers on two GPUs, misaligned pointers, overlapping matrices, an unknown
// {kernel} or one that cannot run the problem), gt::Error(cuda) when the
// launch fails.
std::string transpose_device(const void* in, void* out, std::uint64_t rows, std::uint64_t cols,
                             std::size_t elem_size, const DeviceOptions& opts = {});

// data (n x n, leading dimension opts.ld_in or n) becomes its transpose, by
// the registry's in-place kernel (or opts.kernel, which must be one).
std::string transpose_device_inplace(void* data, std::uint64_t n, std::size_t elem_size,
                                     const DeviceOptions& opts = {});

// data (rows x cols, packed rows when rows != cols) becomes its cols x rows
// transpose in the same memory; the caller then reads it as cols x rows. A
// rectangle runs `inplace-rect`: where c = gcd(rows, cols) >= 256, with at
// most 64 blocks of c x c and 2^24 segments of c elements, its blocks in
// place and one pass that moves their rows (about 47% of a device-to-device
// copy of the same bytes on an H100, docs/PERF.md); else two or three passes
// of the gcd decomposition (4-26% there). It may allocate on opts.stream a
// scratch of up to 64 MiB (at least max(rows, cols) elements where a row or
// column is too long for 16 blocks' shared memory), and keeps, per GPU and
// shape, a plan of 4 bytes per segment: the first call of a shape makes it
// with synchronous copies, so that call cannot be captured into a CUDA graph.
std::string transpose_device_inplace(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                                     const DeviceOptions& opts = {});

// out (rows x cols, ld_out) = in (rows x cols, ld_in) in device memory, on
// opts.stream: a transpose whose input is stored column by column (a
// transposed view of a row-major matrix) is this copy.
void copy_device(const void* in, void* out, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                 const DeviceOptions& opts = {});

// Registers [p, p + bytes) with CUDA (cudaHostRegister) for the object's
// lifetime, so the host-memory API copies it by DMA instead of staging it
// through pinned buffers. Registering costs about as much as touching every
// page once, so it pays where the same memory is transposed again, or where
// staging is the bottleneck; docs/PERF.md has the measurement. When CUDA
// refuses (no GPU, a CPU-only build, memory already registered, a read-only
// mapping) the object holds nothing and why() says so: the memory is then
// staged as usual. Not copyable.
class HostRegistration {
 public:
  HostRegistration() = default;
  HostRegistration(void* p, std::size_t bytes);
  ~HostRegistration();
  HostRegistration(HostRegistration&& o) noexcept;
  HostRegistration& operator=(HostRegistration&& o) noexcept;
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

  bool registered() const { return p_ != nullptr; }
  const std::string& why() const { return why_; }  // empty when registered

 private:
  void* p_ = nullptr;
  std::string why_;
};

}  // namespace gt
