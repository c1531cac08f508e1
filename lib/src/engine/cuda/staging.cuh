// The CUDA engine's memory: pinned host staging kept between runs (owned by
// one engine object, never process-wide), the slots that hold a tile on the
// host, and the lanes that hold a tile on the device.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/cuda/cuda_util.cuh"

namespace gt::cuda {

// Pinned staging buffers kept for the next run of the same engine: a program
// (or a bench) that transposes again does not pay for pinning again. Keeps
// buffers of one size only (the last run's). Safe from several threads.
class PinnedPool {
 public:
  // A buffer of exactly `bytes`: a kept one, else a new one.
  [[nodiscard]] cudaError_t take(std::size_t bytes, PinnedBuffer& out);
  // Before a run pins `count` buffers of `bytes`: frees every kept buffer of
  // another size and any beyond `count`, so a run never holds more pinned
  // memory than its own budget allows.
  void trim(std::size_t bytes, std::size_t count);
  void release() { trim(0, 0); }
  // Keeps `b` for the next run (buffers of another size are freed).
  void give(PinnedBuffer&& b);

 private:
  std::mutex mu_;
  std::vector<PinnedBuffer> kept_;
};

// A tile (or a pair of tiles) in flight: its host staging buffer and the
// events that time its trip through a lane.
struct Slot {
  PinnedBuffer buf;  // empty when neither side needs staging
  Event start, h2d, kernel;
  Event done{cudaEventBlockingSync};  // the writer waits on it without spinning a core
};

// One CUDA stream with the device buffers of the tile it moves. `mu` keeps
// one tile's H2D, kernels and D2H together in the stream's order.
struct Lane {
  Stream stream;
  DeviceBuffer d[3];
  std::mutex mu;
};

// Allocates `count` lanes of `bufs` device buffers of `bytes`; false, with
// nothing held, when the device runs out of memory.
[[nodiscard]] bool allocate_lanes(std::vector<std::unique_ptr<Lane>>& out, int count, int bufs, std::size_t bytes);

}  // namespace gt::cuda
