// The CUDA streaming engine: any matrix, from any Source to any Sink (or in
// place), through the GPU in tiles, with every stage running at once.
//
//   reader threads   Source::read() of tile k into a pinned staging slot,
//                    then enqueue on lane k % lanes: H2D, kernel, D2H back
//                    into the same slot (stream order makes that safe);
//   lanes            one CUDA stream each, with the device buffers of one
//                    tile (two out of place, three for an in-place pair);
//   writer threads   wait for tile k's last event, Sink::write() it, free
//                    the slot.
//
// A matrix already in pinned host memory (HostView::pinned) skips staging:
// its tiles go to and from the device by 2-D DMA straight from the user's
// memory. Slots are taken together with the next tile number, so a slot is
// never held by a tile the writers cannot reach yet (no deadlock however the
// reader threads interleave); slots past the first are pinned by a
// background thread while the first tiles already move, since pinning
// gigabytes takes a noticeable time.
//
// Budgets: device buffers lanes x (2 or 3) tiles <= --device-mem; staging
// slots x tile (x2 in place) <= --host-mem. When the device cannot give the
// buffers (another process holds memory), tiles are halved until it can, and
// the report says so.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/locked_matrix.hpp"
#include "cuda/cuda_util.cuh"
#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/kernels.hpp"
#include "gtranspose/planner.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {
namespace {

using cuda::DeviceBuffer;
using cuda::Event;
using cuda::PinnedBuffer;
using cuda::Stream;
using Clock = std::chrono::steady_clock;

constexpr int kDefaultLanes = 4;
// Reader or writer threads for a file that takes positioned I/O from several
// threads (raw, .npy, contiguous HDF5), and for pageable host memory, where
// each thread is one memcpy stream (~2 GB/s each for 16 KiB rows on the H100
// host: four writers held a 16 GiB pageable run to 14.9 GB/s).
constexpr int kIoThreads = 4;
constexpr int kMemoryThreads = 8;
// Tiles are halved down to this when device memory runs out.
constexpr std::uint64_t kMinTileBytes = std::uint64_t(1) << 20;
// The largest tile that goes through host staging. Pinning costs about as
// much as writing the memory once (measured on the H100 host: 12 slots of
// 256 MiB pinned during a 2 GiB file run cost ~1.5 s of its 3.1 s), while
// 64 MiB tiles (4096 x 4096 f32) still read and write 16 KiB runs.
constexpr std::uint64_t kStagedTileBytes = std::uint64_t(64) << 20;

double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

const kernels::KernelInfo& pick_kernel(const std::string& name, std::size_t es) {
  if (name.empty() || name == "auto") return kernels::best(es, kernels::Kind::transpose);
  const kernels::KernelInfo* k = kernels::find(name);
  if (!k) throw Error(ErrorKind::usage, "unknown kernel '" + name + "': see gtranspose --list-kernels");
  if (k->kind != kernels::Kind::transpose)
    throw Error(ErrorKind::usage, "kernel '" + name + "' is not an out-of-place transpose: the engine moves tiles with " +
                                      "one of: " + kernels::names(kernels::Kind::transpose));
  return *k;
}

void require_device() {
  std::string why;
  if (cuda_device_count(&why) == 0) throw Error(ErrorKind::no_device, "--engine cuda: " + why);
}

void check_cancel(const RunOptions& o) {
  if (o.cancel && o.cancel->load()) throw Error(ErrorKind::cancelled, "interrupted");
}

// Device budget: what the user gave, else half the free memory, at most 4 GiB
// (four lanes of 256 MiB tiles need 2-3 GiB; more buys nothing).
std::uint64_t device_budget(const RunOptions& o) {
  if (o.device_mem) return o.device_mem;
  std::size_t free_b = 0, total_b = 0;
  GT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return std::min<std::uint64_t>(free_b / 2, std::uint64_t(4) << 30);
}

// Time during which at least one interval was open: a stage's wall-clock
// occupancy, however many threads or streams ran it.
class Intervals {
 public:
  void add(double a, double b) { v_.emplace_back(a, b); }
  double covered() {
    std::sort(v_.begin(), v_.end());
    double total = 0, lo = 0, hi = -1;
    for (const auto& [a, b] : v_) {
      if (a > hi) {
        if (hi > lo) total += hi - lo;
        lo = a;
        hi = b;
      } else {
        hi = std::max(hi, b);
      }
    }
    if (hi > lo) total += hi - lo;
    return total;
  }

 private:
  std::vector<std::pair<double, double>> v_;
};

// Pinned staging memory kept for the next run in this process: a program
// (or a bench) that transposes again does not pay for pinning again. It
// keeps the buffers of one size only (the last run's), and is never freed at
// exit (the CUDA runtime may be gone by then; the OS takes the memory back).
class PinnedPool {
 public:
  static PinnedPool& get() {
    static PinnedPool* pool = new PinnedPool;
    return *pool;
  }
  // A buffer of exactly `bytes`: a kept one, else a new one.
  cudaError_t take(std::size_t bytes, PinnedBuffer& out) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (auto it = kept_.begin(); it != kept_.end(); ++it)
        if (it->size() == bytes) {
          out = std::move(*it);
          kept_.erase(it);
          return cudaSuccess;
        }
    }
    return out.try_allocate(bytes);
  }
  // Before a run pins `count` buffers of `bytes`: frees every kept buffer of
  // another size and any beyond `count`, so a run never holds more pinned
  // memory than its own budget allows.
  void trim(std::size_t bytes, std::size_t count) {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<PinnedBuffer> keep;
    for (auto& k : kept_)
      if (k.size() == bytes && keep.size() < count) keep.push_back(std::move(k));
    kept_ = std::move(keep);
  }
  void release() { trim(0, 0); }
  void give(PinnedBuffer&& b) {
    if (!b.get()) return;
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<PinnedBuffer> keep;
    for (auto& k : kept_)
      if (k.size() == b.size()) keep.push_back(std::move(k));
    kept_ = std::move(keep);  // buffers of another size are freed here
    kept_.push_back(std::move(b));
  }

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
bool allocate_lanes(std::vector<std::unique_ptr<Lane>>& out, int count, int bufs, std::size_t bytes) {
  out.clear();
  for (int i = 0; i < count; ++i) {
    auto lane = std::make_unique<Lane>();
    for (int j = 0; j < bufs; ++j) {
      const cudaError_t e = lane->d[j].try_allocate(bytes);
      if (e == cudaErrorMemoryAllocation) {
        out.clear();
        return false;
      }
      GT_CUDA_CHECK(e);
    }
    out.push_back(std::move(lane));
  }
  return true;
}

// The ring's bookkeeping: free slots, the next item to read and to write,
// and the items queued on the GPU. All waits end early on abort.
class Ring {
 public:
  // The number of items is known once the plan is (after the device buffers).
  void set_items(std::uint64_t items) { items_ = items; }

  void add_slot(int s) {
    std::lock_guard<std::mutex> lk(mu_);
    free_.push_back(s);
    cv_.notify_all();
  }
  // A free slot and the next item, taken together; false when all items are
  // taken or the run aborted.
  bool take(int& slot, std::uint64_t& item) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return abort_ || next_read_ >= items_ || !free_.empty(); });
    if (abort_ || next_read_ >= items_) return false;
    slot = free_.front();
    free_.pop_front();
    item = next_read_++;
    return true;
  }
  void queued(std::uint64_t item, int slot) {
    std::lock_guard<std::mutex> lk(mu_);
    ready_[item] = slot;
    cv_.notify_all();
  }
  // The next item in order, once it is queued; false when all are written
  // or the run aborted.
  bool next(std::uint64_t& item, int& slot) {
    std::unique_lock<std::mutex> lk(mu_);
    if (abort_ || next_write_ >= items_) return false;
    item = next_write_++;
    cv_.wait(lk, [&] { return abort_ || ready_.count(item) != 0; });
    if (abort_) return false;
    slot = ready_[item];
    ready_.erase(item);
    return true;
  }
  // The slot of the next item in order if it is queued already (one writer
  // thread only: the in-place batcher); -1 otherwise. take_peeked() claims it.
  int peek() {
    std::lock_guard<std::mutex> lk(mu_);
    if (abort_ || next_write_ >= items_) return -1;
    auto it = ready_.find(next_write_);
    return it == ready_.end() ? -1 : it->second;
  }
  std::uint64_t take_peeked() {
    std::lock_guard<std::mutex> lk(mu_);
    ready_.erase(next_write_);
    return next_write_++;
  }
  void release(int slot) {
    std::lock_guard<std::mutex> lk(mu_);
    free_.push_back(slot);
    cv_.notify_all();
  }
  void fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> lk(mu_);
    if (!error_) error_ = e;
    abort_ = true;
    cv_.notify_all();
  }
  bool aborted() {
    std::lock_guard<std::mutex> lk(mu_);
    return abort_;
  }
  std::exception_ptr error() {
    std::lock_guard<std::mutex> lk(mu_);
    return error_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> free_;
  std::map<std::uint64_t, int> ready_;
  std::uint64_t items_ = 0, next_read_ = 0, next_write_ = 0;
  bool abort_ = false;
  std::exception_ptr error_;
};

// What the threads measure, merged under one lock.
struct Stats {
  std::mutex mu;
  Clock::time_point t0 = Clock::now();
  Intervals read, write, h2d, kernel, d2h;
  std::vector<double> kernel_rates;  // per tile, bytes read + written per second
  std::uint64_t done = 0;

  double now() const { return secs(t0, Clock::now()); }
};

// The engine's shared machinery: lanes, slots, ring, threads.
class Streamer {
 public:
  Streamer() = default;
  ~Streamer() {
    quiesce();
    for (auto& sl : slots_) PinnedPool::get().give(std::move(sl->buf));
  }
  Streamer(const Streamer&) = delete;
  Streamer& operator=(const Streamer&) = delete;

  Ring ring_;
  Stats stats_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::string> notes_;
  cudaEvent_t ref_ = nullptr;  // the GPU's time zero, for stage intervals
  std::optional<Event> ref_event_;

  // Finds device buffers for lanes x bufs tiles: halves the tile while the
  // device has no room (plan_for(tile_bytes) returns the bytes one tile of
  // the resulting plan holds). Returns the final tile budget.
  template <class PlanFor>
  std::uint64_t allocate_device(int& lanes, int bufs, std::uint64_t tile_bytes, bool may_shrink, PlanFor plan_for) {
    const std::uint64_t wanted = tile_bytes;
    const int wanted_lanes = lanes;
    for (;;) {
      const std::uint64_t buf = plan_for(tile_bytes);
      if (allocate_lanes(lanes_, lanes, bufs, std::size_t(buf))) break;
      if (may_shrink && tile_bytes / 2 >= kMinTileBytes) {
        tile_bytes /= 2;
      } else if (lanes > 1) {
        lanes = 1;
      } else {
        std::size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        throw Error(ErrorKind::cuda, "out of GPU memory: " + std::to_string(bufs) + " buffers of " + format_bytes(buf) +
                                         " do not fit in the " + format_bytes(free_b) + " free; " +
                                         (may_shrink ? "free the GPU or give a smaller --device-mem"
                                                     : "the interrupted run's tiles cannot shrink: free the GPU"));
      }
    }
    if (tile_bytes != wanted || lanes != wanted_lanes) {
      // plan_for() re-plans: the final tile last, so the plan stays the final one.
      const std::uint64_t want_buf = plan_for(wanted);
      const std::uint64_t got_buf = plan_for(tile_bytes);
      notes_.push_back("the GPU had too little free memory for " + std::to_string(wanted_lanes) + " lanes of " +
                       format_bytes(want_buf) + " tiles: shrunk to " + std::to_string(lanes) + " lane" +
                       (lanes > 1 ? "s" : "") + " of " + format_bytes(got_buf) + " tiles");
    }
    ref_event_.emplace();
    ref_ = ref_event_->get();
    GT_CUDA_CHECK(cudaEventRecord(ref_, lanes_[0]->stream.get()));
    return tile_bytes;
  }

  // Slots of `bytes` pinned staging each (0: no staging). The first is
  // pinned now (so a failure is reported before any work); the rest by a
  // background thread, handed to the ring as each is ready.
  void allocate_slots(int count, std::size_t bytes) {
    PinnedPool::get().trim(bytes, std::size_t(count));
    for (int i = 0; i < count; ++i) slots_.push_back(std::make_unique<Slot>());
    if (bytes) {
      const cudaError_t e = PinnedPool::get().take(bytes, slots_[0]->buf);
      if (e != cudaSuccess)
        throw Error(ErrorKind::cuda, "cannot pin " + format_bytes(bytes) + " of host memory for staging: " +
                                         cudaGetErrorString(e) + " (give a smaller --host-mem, or raise ulimit -l)");
    }
    ring_.add_slot(0);
    if (count == 1) return;
    pinner_ = std::thread([this, count, bytes] {
      for (int i = 1; i < count && !ring_.aborted(); ++i) {
        if (bytes && PinnedPool::get().take(bytes, slots_[i]->buf) != cudaSuccess) {
          std::lock_guard<std::mutex> lk(stats_.mu);
          notes_.push_back("could pin only " + std::to_string(i) + " staging buffers of " + format_bytes(bytes));
          return;
        }
        ring_.add_slot(i);
      }
    });
  }

  // Runs `readers` threads of read_fn and `writers` threads of write_fn to
  // the end; rethrows the first exception any of them threw.
  template <class ReadFn, class WriteFn>
  void run(int readers, int writers, ReadFn read_fn, WriteFn write_fn) {
    std::vector<std::thread> threads;
    auto guarded = [this](auto fn) {
      return [this, fn]() mutable {
        try {
          fn();
        } catch (...) {
          ring_.fail(std::current_exception());
        }
      };
    };
    try {
      for (int i = 0; i < readers; ++i) threads.emplace_back(guarded(read_fn));
      for (int i = 0; i < writers; ++i) threads.emplace_back(guarded(write_fn));
    } catch (...) {  // no thread to be had: stop the ones started, then report
      ring_.fail(std::current_exception());
    }
    for (auto& t : threads) t.join();
    quiesce();
    if (auto e = ring_.error()) std::rethrow_exception(e);
  }

  // Runs fn and records its interval in stage `iv` (read or write).
  template <class F>
  void timed(Intervals& iv, F&& fn) {
    const double a = stats_.now();
    fn();
    const double b = stats_.now();
    std::lock_guard<std::mutex> lk(stats_.mu);
    iv.add(a, b);
  }

  // Times of one slot's trip on the GPU, after its `done` event.
  void account_gpu(Slot& s, std::uint64_t bytes) {
    float a = 0, b = 0, c = 0, d = 0;
    GT_CUDA_CHECK(cudaEventElapsedTime(&a, ref_, s.start.get()));
    GT_CUDA_CHECK(cudaEventElapsedTime(&b, ref_, s.h2d.get()));
    GT_CUDA_CHECK(cudaEventElapsedTime(&c, ref_, s.kernel.get()));
    GT_CUDA_CHECK(cudaEventElapsedTime(&d, ref_, s.done.get()));
    std::lock_guard<std::mutex> lk(stats_.mu);
    stats_.h2d.add(a / 1e3, b / 1e3);
    stats_.kernel.add(b / 1e3, c / 1e3);
    stats_.d2h.add(c / 1e3, d / 1e3);
    if (c > b) stats_.kernel_rates.push_back(2.0 * double(bytes) / ((c - b) / 1e3));
  }

  // Stops the pinning thread and waits for every lane, so no DMA is still
  // running into a buffer about to be freed (also after an exception).
  void quiesce() {
    if (pinner_.joinable()) {
      ring_.fail(nullptr);  // harmless after a clean run: every wait is over
      pinner_.join();
    }
    for (auto& l : lanes_) cudaStreamSynchronize(l->stream.get());
    cudaGetLastError();
  }

  // Fills the report's stages, overlap and memory figures.
  void finish_report(RunReport& r, std::uint64_t read_bytes, std::uint64_t write_bytes, std::uint64_t gpu_bytes,
                     std::uint64_t dev_bytes) {
    r.wall_s = stats_.now();
    const double t_read = stats_.read.covered(), t_write = stats_.write.covered();
    const double t_h2d = stats_.h2d.covered(), t_ker = stats_.kernel.covered(), t_d2h = stats_.d2h.covered();
    if (read_bytes) r.stage("read") = {"read", t_read, read_bytes};
    r.stage("h2d") = {"h2d", t_h2d, gpu_bytes};
    r.stage("kernel") = {"kernel", t_ker, 2 * gpu_bytes};
    r.stage("d2h") = {"d2h", t_d2h, gpu_bytes};
    if (write_bytes) r.stage("write") = {"write", t_write, write_bytes};
    // The kernel's own rate: the median tile's, timed by events around its
    // launch in its lane (a tile's interval also holds any wait for another
    // lane's work on the GPU, so the median, not the sum, says what the
    // kernel does).
    auto& kr = stats_.kernel_rates;
    if (!kr.empty()) {
      std::nth_element(kr.begin(), kr.begin() + kr.size() / 2, kr.end());
      r.kernel_gbps = kr[kr.size() / 2] / 1e9;
    }
    double best = 0;
    for (const auto& s : r.stages)
      if (s.busy_s > best) {
        best = s.busy_s;
        r.bottleneck = s.name;
      }
    r.overlap = r.wall_s > 0 ? best / r.wall_s : 0;
    r.device_mem_peak = dev_bytes;
    r.host_mem_peak = peak_rss_bytes();
    for (auto& n : notes_) r.notes.push_back(n);
  }

 private:
  std::thread pinner_;
};

// Refuses a named kernel that cannot move this run's tiles before any I/O
// (a failure at the first launch could leave an unjournaled matrix half done).
void check_kernel_fits(const kernels::KernelInfo& k, std::uint64_t h, std::uint64_t w, std::size_t es) {
  std::string why;
  if (!k.supports(kernels::Problem{h, w, es, w, h}, &why))
    throw Error(ErrorKind::usage, "kernel '" + std::string(k.name) + "' cannot move this run's " + std::to_string(h) + "x" +
                                      std::to_string(w) + " tiles: " + why + "; use --kernel auto");
}

RunReport base_report(const MatrixInfo& info, const kernels::KernelInfo& k, const char* mode, std::uint64_t host,
                      std::uint64_t dev) {
  RunReport r;
  r.engine = "cuda";
  r.kernel = k.name;
  r.mode = mode;
  r.shape = info.shape;
  r.elem_size = info.elem_size;
  r.bytes = info.bytes();
  r.host_mem_budget = host;
  r.device_mem_budget = dev;
  return r;
}

// 2-D copies between a rectangle of user memory and a packed device tile.
void copy_in(void* d, const HostView& v, const Tile& t, std::size_t es, cudaStream_t st) {
  const auto* src = static_cast<const unsigned char*>(v.data) + (t.r0 * v.ld + t.c0) * es;
  GT_CUDA_CHECK(cudaMemcpy2DAsync(d, t.w * es, src, v.ld * es, t.w * es, t.h, cudaMemcpyHostToDevice, st));
}
void copy_out(const HostView& v, const Tile& t, const void* d, std::size_t es, cudaStream_t st) {
  auto* dst = static_cast<unsigned char*>(v.data) + (t.r0 * v.ld + t.c0) * es;
  GT_CUDA_CHECK(cudaMemcpy2DAsync(dst, v.ld * es, d, t.w * es, t.w * es, t.h, cudaMemcpyDeviceToHost, st));
}

}  // namespace

void release_pinned_staging() { PinnedPool::get().release(); }

RunReport run_cuda(Source& src, Sink& dst, const RunOptions& opts) {
  require_device();
  const MatrixInfo& info = src.info();
  const std::size_t es = info.elem_size;
  if (dst.info().shape != info.shape.transposed() || dst.info().elem_size != es)
    throw Error(ErrorKind::internal, "output " + to_string(dst.info().shape) + " is not the transpose of input " +
                                         to_string(info.shape));
  const kernels::KernelInfo& k = pick_kernel(opts.kernel, es);
  const std::uint64_t dev = device_budget(opts);
  const std::uint64_t host = opts.host_mem ? opts.host_mem : default_host_budget();

  const HostView* in_view = src.host_view();
  const HostView* out_view = dst.host_view();
  const bool in_direct = in_view && in_view->pinned, out_direct = out_view && out_view->pinned;
  const bool staged = !(in_direct && out_direct);
  int lanes = opts.streams > 0 ? opts.streams : kDefaultLanes;
  const int readers = in_direct ? 1 : !src.concurrent_reads() ? 1 : in_view ? kMemoryThreads : kIoThreads;
  const int writers = out_direct ? 1 : !dst.concurrent_writes() ? 1 : out_view ? kMemoryThreads : kIoThreads;
  // Enough slots for every lane and every I/O thread to hold a tile at once.
  const int want_slots = lanes + readers + writers;

  // A lane holds an input and an output tile; a slot one staging tile (the
  // D2H lands back in the buffer the H2D read, the stream orders the two).
  std::uint64_t tile_bytes = dev / (2 * std::uint64_t(lanes));
  if (staged) tile_bytes = std::min(tile_bytes, host / std::uint64_t(std::min(want_slots, 4)));
  if (!opts.chunk_elems) tile_bytes = std::min(tile_bytes, staged ? kStagedTileBytes : kMaxTileBytes);

  RunReport r = base_report(info, k, "out-of-place", host, dev);
  auto s = std::make_unique<Streamer>();
  // The plan depends on the tile the device can hold: settle both together.
  std::optional<Plan> plan;
  auto plan_for = [&](std::uint64_t tb) {
    plan.emplace(PlanRequest{info.shape, es, tb, src.preferred_block(), opts.chunk_elems});
    return plan->tile_h() * plan->tile_w() * es;
  };
  s->allocate_device(lanes, 2, tile_bytes, true, plan_for);
  s->ring_.set_items(plan->count());
  check_kernel_fits(k, plan->tile_h(), plan->tile_w(), es);

  const std::size_t buf = std::size_t(plan->tile_h() * plan->tile_w() * es);
  // Never more slots than tiles: pinning a slot that no tile uses is waste.
  const int slots = int(std::min<std::uint64_t>(
      plan->count(), staged ? std::clamp<std::uint64_t>(host / buf, 2, std::uint64_t(want_slots)) : 2 * lanes));
  s->allocate_slots(slots, staged ? buf : 0);
  r.tiles = plan->count();
  r.tile_shape = {plan->tile_h(), plan->tile_w()};
  r.threads = readers + writers;
  r.notes.push_back(std::to_string(lanes) + " stream" + (lanes > 1 ? "s" : "") + ", " + std::to_string(slots) +
                    " staging slot" + (slots > 1 ? "s" : "") + (staged ? " of " + format_bytes(buf) : " (direct DMA)") +
                    ", " + std::to_string(readers) + " reader and " + std::to_string(writers) + " writer thread" +
                    (readers + writers > 2 ? "s" : ""));

  // Write-back: an output row band is done when all its tiles (one tile
  // column of the input) are written.
  const std::uint64_t nr = plan->tile_rows();
  std::vector<std::uint64_t> band_left(plan->tile_cols(), nr);
  std::mutex band_mu;
  const std::uint64_t total = info.bytes();

  auto reader = [&] {
    int si;
    std::uint64_t item;
    while (s->ring_.take(si, item)) {
      check_cancel(opts);
      const Tile t = plan->tile_output_order(item);
      Slot& sl = *s->slots_[si];
      if (!in_direct) s->timed(s->stats_.read, [&] { src.read(t.r0, t.c0, t.h, t.w, sl.buf.get(), t.w); });
      Lane& ln = *s->lanes_[item % s->lanes_.size()];
      {
        std::lock_guard<std::mutex> lk(ln.mu);
        cudaStream_t st = ln.stream.get();
        const std::size_t bytes = std::size_t(t.elems() * es);
        GT_CUDA_CHECK(cudaEventRecord(sl.start.get(), st));
        if (in_direct)
          copy_in(ln.d[0].get(), *in_view, t, es, st);
        else
          GT_CUDA_CHECK(cudaMemcpyAsync(ln.d[0].get(), sl.buf.get(), bytes, cudaMemcpyHostToDevice, st));
        GT_CUDA_CHECK(cudaEventRecord(sl.h2d.get(), st));
        k.launch(ln.d[0].get(), ln.d[1].get(), kernels::Problem{t.h, t.w, es, t.w, t.h}, st);
        GT_CUDA_CHECK(cudaEventRecord(sl.kernel.get(), st));
        const Tile o{t.c0, t.r0, t.w, t.h};  // where it lands in the output
        if (out_direct)
          copy_out(*out_view, o, ln.d[1].get(), es, st);
        else
          GT_CUDA_CHECK(cudaMemcpyAsync(sl.buf.get(), ln.d[1].get(), bytes, cudaMemcpyDeviceToHost, st));
        GT_CUDA_CHECK(cudaEventRecord(sl.done.get(), st));
      }
      s->ring_.queued(item, si);
    }
  };
  auto writer = [&] {
    int si;
    std::uint64_t item;
    while (s->ring_.next(item, si)) {
      Slot& sl = *s->slots_[si];
      GT_CUDA_CHECK(cudaEventSynchronize(sl.done.get()));
      const Tile t = plan->tile_output_order(item);
      s->account_gpu(sl, t.elems() * es);
      if (!out_direct) s->timed(s->stats_.write, [&] { dst.write(t.c0, t.r0, t.w, t.h, sl.buf.get(), t.h); });
      s->ring_.release(si);
      bool band_done = false;
      {
        // Under the lock: the callback sees one call at a time, in order.
        std::lock_guard<std::mutex> lk(band_mu);
        band_done = --band_left[t.c0 / plan->tile_w()] == 0;
        const std::uint64_t done = s->stats_.done += t.elems() * es;
        if (opts.progress) opts.progress(done, total);
      }
      if (band_done) dst.rows_complete(t.c0, t.w);
    }
  };
  s->run(readers, writers, reader, writer);

  const std::uint64_t dev_bytes = std::uint64_t(s->lanes_.size()) * 2 * buf;
  s->finish_report(r, in_direct ? 0 : total, out_direct ? 0 : total, total, dev_bytes);
  return r;
}

RunReport run_cuda_inplace(InplaceMatrix& matrix, const RunOptions& opts) {
  require_device();
  // A matrix that allows one call at a time (HDF5 through its library) is
  // shared call by call between the reader threads and the writer.
  std::mutex io_mu;
  LockedMatrix locked(matrix, io_mu);
  InplaceMatrix& m = matrix.concurrent_io() ? matrix : static_cast<InplaceMatrix&>(locked);
  const MatrixInfo& info = m.info();
  if (info.shape.rows != info.shape.cols)
    throw Error(ErrorKind::usage, "in-place transpose needs a square matrix, not " + to_string(info.shape));
  const std::size_t es = info.elem_size;
  const std::uint64_t n = info.shape.rows;
  const kernels::KernelInfo& k = pick_kernel(opts.kernel, es);
  const std::uint64_t dev = device_budget(opts);
  const std::uint64_t host = opts.host_mem ? opts.host_mem : default_host_budget();

  std::unique_ptr<InplaceWriter> own_writer;
  InplaceWriter* w = opts.writer;
  if (!w) {
    own_writer = plain_inplace_writer();
    w = own_writer.get();
  }
  const HostView* view = m.host_view();
  // Straight DMA into the matrix only when nothing needs to see the writes.
  const bool direct = view && view->pinned && !opts.writer;
  // With a journal the one writer thread bounds the run (its copies and the
  // protocol's fsyncs): two lanes and two readers keep it fed, and larger
  // tiles (256 MiB: 32 KiB rows at f32) make its copies cheaper. Measured on
  // 8 GiB f32 (PERF.md run 35): 64 MiB tiles, 4 lanes, 4 readers, batches of
  // up to 5 pairs took 22.4 s; 256 MiB tiles 17.3 s; the CPU engine (256 MiB,
  // one pair per batch) 14.1 s.
  const bool journaled = opts.writer != nullptr && !direct;
  int lanes = opts.streams > 0 ? opts.streams : journaled ? 2 : kDefaultLanes;
  const int readers = direct ? 1 : !m.concurrent_io() ? 1 : journaled ? 2 : view ? kMemoryThreads : kIoThreads;
  // A journal orders the writes (one writer, in batches); the plain writer
  // has no order to keep, so several threads write pairs at once.
  const int writers = (!opts.writer && !direct && m.concurrent_io()) ? (view ? kMemoryThreads : kIoThreads) : 1;
  const int want_slots = journaled ? 4 : lanes + readers + writers + 1;

  // A lane holds a pair's two tiles and one more for the kernels' output; a
  // slot a pair's two tiles on the host.
  std::uint64_t tile_bytes = dev / (3 * std::uint64_t(lanes));
  if (!direct) tile_bytes = std::min(tile_bytes, host / (2 * std::uint64_t(std::min(want_slots, 4))));
  if (!opts.chunk_elems)
    tile_bytes = std::min(tile_bytes, direct || journaled ? kMaxTileBytes : kStagedTileBytes);

  RunReport r = base_report(info, k, "in-place", host, dev);
  const std::uint64_t fixed_block = w->required_block();
  std::optional<InplacePlan> plan;
  auto plan_for = [&](std::uint64_t tb) {
    if (fixed_block)
      plan.emplace(InplacePlan::with_block(n, fixed_block));
    else
      plan.emplace(n, es, tb, opts.chunk_elems);
    return plan->block() * plan->block() * es;
  };
  if (fixed_block) {
    const std::uint64_t tb = fixed_block * fixed_block * es;
    if (3 * tb > dev)
      throw Error(ErrorKind::usage, "resuming needs the interrupted run's " + std::to_string(fixed_block) + "x" +
                                        std::to_string(fixed_block) + " tiles: give --device-mem of at least " +
                                        format_bytes(3 * tb));
    if (!direct && 2 * tb > host)
      throw Error(ErrorKind::usage, "resuming needs the interrupted run's " + std::to_string(fixed_block) + "x" +
                                        std::to_string(fixed_block) + " tiles: give --host-mem of at least " +
                                        format_bytes(2 * tb));
    lanes = int(std::max<std::uint64_t>(1, std::min<std::uint64_t>(lanes, dev / (3 * tb))));
  }
  auto s = std::make_unique<Streamer>();
  s->allocate_device(lanes, 3, tile_bytes, fixed_block == 0, plan_for);
  const std::uint64_t first = std::min(w->first_pair(), plan->count());
  s->ring_.set_items(plan->count() - first);

  const std::uint64_t b = plan->block();
  const std::size_t tile = std::size_t(b * b * es);
  check_kernel_fits(k, b, b, es);
  const int slots = int(std::min<std::uint64_t>(
      std::max<std::uint64_t>(1, plan->count() - first),
      // One slot when the budget holds only one pair (a resumed run's fixed
      // tiles): slower, never over --host-mem.
      direct ? 2 * lanes : std::clamp<std::uint64_t>(host / (2 * tile), 1, std::uint64_t(want_slots))));
  s->allocate_slots(slots, direct ? 0 : 2 * tile);
  r.tiles = plan->count();
  r.tile_shape = {b, b};
  r.threads = readers + writers;
  r.notes.push_back(std::to_string(lanes) + " stream" + (lanes > 1 ? "s" : "") + ", " + std::to_string(slots) +
                    " staging slots" + (direct ? " (direct DMA)" : " of " + format_bytes(2 * tile)) + ", " +
                    std::to_string(readers) + " reader thread" + (readers > 1 ? "s" : "") + ", " +
                    std::to_string(writers) + " writer thread" + (writers > 1 ? "s" : ""));
  if (first) r.notes.push_back("resumed at tile pair " + std::to_string(first) + " of " + std::to_string(plan->count()));

  w->begin(*plan);
  std::uint64_t moved_before = 0;  // bytes of the pairs done before a resume
  for (std::uint64_t i = 0; i < first; ++i) {
    const TilePair p = plan->pair(i);
    moved_before += (p.diagonal() ? 1 : 2) * p.a.elems() * es;
  }
  s->stats_.done = moved_before;
  const std::uint64_t total = info.bytes();
  std::uint64_t gpu_bytes = 0;
  std::mutex progress_mu;

  auto reader = [&] {
    int si;
    std::uint64_t item;
    while (s->ring_.take(si, item)) {
      check_cancel(opts);
      const TilePair p = plan->pair(first + item);
      Slot& sl = *s->slots_[si];
      unsigned char* ha = sl.buf.get();
      unsigned char* hb = ha ? ha + tile : nullptr;
      if (!direct)
        s->timed(s->stats_.read, [&] {
          m.read(p.a.r0, p.a.c0, p.a.h, p.a.w, ha, p.a.w);
          if (!p.diagonal()) m.read(p.b.r0, p.b.c0, p.b.h, p.b.w, hb, p.b.w);
        });
      Lane& ln = *s->lanes_[item % s->lanes_.size()];
      std::lock_guard<std::mutex> lk(ln.mu);
      cudaStream_t st = ln.stream.get();
      const std::size_t ab = std::size_t(p.a.elems() * es);
      unsigned char *d0 = ln.d[0].get(), *d1 = ln.d[1].get(), *d2 = ln.d[2].get();
      GT_CUDA_CHECK(cudaEventRecord(sl.start.get(), st));
      if (direct) {
        copy_in(d0, *view, p.a, es, st);
        if (!p.diagonal()) copy_in(d1, *view, p.b, es, st);
      } else {
        GT_CUDA_CHECK(cudaMemcpyAsync(d0, ha, ab, cudaMemcpyHostToDevice, st));
        if (!p.diagonal()) GT_CUDA_CHECK(cudaMemcpyAsync(d1, hb, ab, cudaMemcpyHostToDevice, st));
      }
      GT_CUDA_CHECK(cudaEventRecord(sl.h2d.get(), st));
      // d2 = A^T (tile b's new content); then d0 = B^T (tile a's new content).
      k.launch(d0, d2, kernels::Problem{p.a.h, p.a.w, es, p.a.w, p.a.h}, st);
      if (!p.diagonal()) k.launch(d1, d0, kernels::Problem{p.b.h, p.b.w, es, p.b.w, p.b.h}, st);
      GT_CUDA_CHECK(cudaEventRecord(sl.kernel.get(), st));
      if (direct) {
        copy_out(*view, p.b, d2, es, st);
        if (!p.diagonal()) copy_out(*view, p.a, d0, es, st);
      } else {
        // The slot then holds new_a at ha and new_b at hb (on the diagonal,
        // the tile's transpose at ha).
        if (p.diagonal()) {
          GT_CUDA_CHECK(cudaMemcpyAsync(ha, d2, ab, cudaMemcpyDeviceToHost, st));
        } else {
          GT_CUDA_CHECK(cudaMemcpyAsync(ha, d0, ab, cudaMemcpyDeviceToHost, st));
          GT_CUDA_CHECK(cudaMemcpyAsync(hb, d2, ab, cudaMemcpyDeviceToHost, st));
        }
      }
      GT_CUDA_CHECK(cudaEventRecord(sl.done.get(), st));
      s->ring_.queued(item, si);
    }
  };

  // With one writer, pairs go to the InplaceWriter in order, in batches of
  // the consecutive pairs already back from the GPU. A journal takes them one
  // pair at a time: the CPU engine's setting, which measured fastest in place
  // (PERF.md, runs 35-36).
  // Batching peeks at the next item: one writer thread only.
  const std::size_t max_batch = writers > 1 || journaled ? 1 : std::max(1, slots / 2);
  auto writer = [&] {
    int si;
    std::uint64_t item;
    std::vector<std::pair<std::uint64_t, int>> batch;
    std::vector<PairWrite> writes;
    while (s->ring_.next(item, si)) {
      batch.assign(1, {item, si});
      GT_CUDA_CHECK(cudaEventSynchronize(s->slots_[si]->done.get()));
      while (batch.size() < max_batch) {
        const int nsi = s->ring_.peek();
        if (nsi < 0 || cudaEventQuery(s->slots_[nsi]->done.get()) != cudaSuccess) break;
        batch.emplace_back(s->ring_.take_peeked(), nsi);
      }
      cudaGetLastError();  // cudaEventQuery's cudaErrorNotReady is not an error
      writes.clear();
      std::uint64_t bytes = 0;
      for (const auto& [it, sj] : batch) {
        Slot& sl = *s->slots_[sj];
        const TilePair p = plan->pair(first + it);
        const std::uint64_t pb = (p.diagonal() ? 1 : 2) * p.a.elems() * es;
        s->account_gpu(sl, pb);
        bytes += pb;
        PairWrite pw;
        pw.index = first + it;
        pw.pair = p;
        pw.new_a = p.diagonal() ? nullptr : sl.buf.get();
        pw.new_b = p.diagonal() ? sl.buf.get() : sl.buf.get() + tile;
        writes.push_back(pw);
      }
      if (!direct) s->timed(s->stats_.write, [&] { w->write_batch(m, writes); });
      for (const auto& bi : batch) s->ring_.release(bi.second);
      {
        std::lock_guard<std::mutex> lk(progress_mu);  // one call at a time, in order
        std::uint64_t done;
        {
          std::lock_guard<std::mutex> lk2(s->stats_.mu);
          gpu_bytes += bytes;
          done = s->stats_.done += bytes;
        }
        if (opts.progress) opts.progress(done, total);
      }
    }
  };
  s->run(readers, writers, reader, writer);
  s->timed(s->stats_.write, [&] { w->finish(m); });  // the matrix durable, the journal gone
  if (w->journal_bytes()) r.notes.push_back("journal: " + format_bytes(w->journal_bytes()) + " written for crash safety");
  s->finish_report(r, direct ? 0 : gpu_bytes, direct ? 0 : gpu_bytes, gpu_bytes,
                   std::uint64_t(s->lanes_.size()) * 3 * tile);
  return r;
}

}  // namespace gt
