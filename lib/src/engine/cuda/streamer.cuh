// The streaming engine's shared machinery: lanes (device buffers and
// streams), slots (pinned host staging), the ring, the reader and writer
// threads, and the stage statistics. The two drivers (out_of_place.cu,
// in_place.cu) supply what a reader and a writer do with a tile.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/stages.hpp"
#include "engine/cuda/ring.hpp"
#include "engine/cuda/staging.cuh"
#include "gtranspose/engine.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/report.hpp"

namespace gt::cuda {

class Streamer {
 public:
  explicit Streamer(PinnedPool& pool) : pool_(pool) {}
  ~Streamer();
  Streamer(const Streamer&) = delete;
  Streamer& operator=(const Streamer&) = delete;

  Ring ring;
  StageClock clock;
  Intervals read, write, h2d, kernel, d2h;  // added to under clock.mutex()
  std::uint64_t done = 0;                   // bytes finished, under clock.mutex()
  std::vector<std::unique_ptr<Lane>> lanes;
  std::vector<std::unique_ptr<Slot>> slots;

  // Allocates the plan's device buffers. When the device has no room (another
  // process holds memory), takes the next smaller plan (plan_smaller) until
  // one fits, and notes it; gt::Error(cuda) when none does. Returns the plan
  // that fit, which the run then follows.
  RunPlan allocate_device(RunPlan plan);
  // The plan's staging slots. The first is pinned now (so a failure is
  // reported before any work); the rest by a background thread, handed to
  // the ring as each is ready, since pinning gigabytes takes a while.
  void allocate_slots(const RunPlan& plan);

  // Runs `readers` threads of read_fn and `writers` threads of write_fn to
  // the end; rethrows the first exception any of them threw.
  template <class ReadFn, class WriteFn>
  void run(int readers, int writers, ReadFn read_fn, WriteFn write_fn);

  // Times of one slot's trip on the GPU, after its `done` event.
  void account_gpu(Slot& s, std::uint64_t bytes);
  // Stops the pinning thread and waits for every lane, so no DMA is still
  // running into a buffer about to be freed (also after an exception).
  void quiesce() noexcept;
  // The report's stages, kernel rate, overlap and notes.
  void finish_report(RunReport& r, std::uint64_t read_bytes, std::uint64_t write_bytes, std::uint64_t gpu_bytes);

 private:
  PinnedPool& pool_;
  std::thread pinner_;
  std::vector<double> kernel_rates_;  // per tile, bytes read + written per second
  std::vector<std::string> notes_;
  std::optional<Event> ref_;          // the GPU's time zero, for stage intervals
};

template <class ReadFn, class WriteFn>
void Streamer::run(int readers, int writers, ReadFn read_fn, WriteFn write_fn) {
  std::vector<std::thread> threads;
  auto guarded = [this](auto fn) {
    return [this, fn]() mutable {
      try {
        fn();
      } catch (...) {
        ring.fail(std::current_exception());
      }
    };
  };
  try {
    for (int i = 0; i < readers; ++i) threads.emplace_back(guarded(read_fn));
    for (int i = 0; i < writers; ++i) threads.emplace_back(guarded(write_fn));
  } catch (...) {  // no thread to be had: stop the ones started, then report
    ring.fail(std::current_exception());
  }
  for (auto& t : threads) t.join();
  quiesce();
  if (auto e = ring.error()) std::rethrow_exception(e);
}

// Raises gt::Error(cancelled) once the caller's flag is set.
inline void check_cancel(const RunOptions& o) {
  if (o.cancel && o.cancel->load()) throw Error(ErrorKind::cancelled, "interrupted");
}

// 2-D copies between a rectangle of user memory and a packed device tile.
void copy_in(void* d, const HostView& v, const Tile& t, std::size_t es, cudaStream_t st);
void copy_out(const HostView& v, const Tile& t, const void* d, std::size_t es, cudaStream_t st);

// The two drivers.
RunReport run_out_of_place(PinnedPool& pool, Source& src, Sink& dst, const RunPlan& plan, const RunOptions& opts);
RunReport run_in_place(PinnedPool& pool, InplaceMatrix& m, InplaceWriter& w, const RunPlan& plan,
                       const RunOptions& opts);

}  // namespace gt::cuda
