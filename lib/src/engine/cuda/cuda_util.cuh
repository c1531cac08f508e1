// CUDA plumbing shared by the bench and the engine: one RAII owner per
// resource (device buffer, pinned host buffer, stream, event). Every runtime
// call is checked by GT_CUDA_CHECK (cuda_check.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "gtranspose/cuda_check.hpp"

namespace gt::cuda {

// Owns one allocation: cudaMalloc (device) or cudaMallocHost (pinned host).
// A failed allocation throws gt::Error(cuda) saying how much was asked for;
// `hint` (e.g. "try a smaller {shape}") ends the message when given.
template <bool Pinned>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes, const char* hint = nullptr);
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  // Allocates without throwing (the streaming engine shrinks its tiles when
  // memory runs out): the CUDA error, cudaSuccess when the buffer holds `bytes`.
  cudaError_t try_allocate(std::size_t bytes);
  unsigned char* get() const { return p_; }
  std::size_t size() const { return n_; }
  void reset();

 private:
  unsigned char* p_ = nullptr;
  std::size_t n_ = 0;
};
using DeviceBuffer = Buffer<false>;
using PinnedBuffer = Buffer<true>;

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  // cudaEventDefault, or e.g. cudaEventBlockingSync for an event a host
  // thread waits on without spinning a core.
  explicit Event(unsigned flags = 0);
  ~Event();
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace gt::cuda
