// A copy team: threads that one caller thread owns, to split one large copy
// into bands copied at once. The CUDA engine's reader and writer threads use
// one each to move a tile between pageable host memory and its pinned slot
// (plan.hpp: kStagingTeam), since one thread's memcpy is far below what the
// memory bus gives several; gt::prefault_host uses one to fault in pages.
//
// Unlike the CPU transposer's shared pool (engine/cpu/thread_pool.hpp), a
// team belongs to one thread (several readers each run their own at once,
// none waits for another's turn), and a band may throw: the copies are
// Source::read and Sink::write calls, which report bad rectangles and I/O.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gt {

// The first unit of band k when `count` units are cut into `parts` bands
// whose sizes differ by at most one (band `parts` starts at `count`).
[[nodiscard]] std::uint64_t band_start(std::uint64_t count, int parts, int k);

// How many bands a team of `size` cuts `count` units into, each at least
// `min_units` (0 counts as 1): at least 1, at most size and count.
[[nodiscard]] int band_count(std::uint64_t count, std::uint64_t min_units, int size);

class CopyTeam {
 public:
  // `size` threads in all, the caller's included: size - 1 helpers start now
  // (none for size <= 1). Throws std::system_error when a thread cannot start.
  explicit CopyTeam(int size);
  ~CopyTeam();
  CopyTeam(const CopyTeam&) = delete;
  CopyTeam& operator=(const CopyTeam&) = delete;

  int size() const { return int(helpers_.size()) + 1; }

  // Runs fn(first, n) over the units [0, count) cut into band_count(count,
  // min_units, size()) bands, the caller running band 0, and returns when
  // every band is done. An exception thrown by a band is rethrown here (the
  // lowest band's, once all bands have ended). Not reentrant: one call at a
  // time, from the owning thread.
  void split(std::uint64_t count, std::uint64_t min_units,
             const std::function<void(std::uint64_t first, std::uint64_t n)>& fn);

 private:
  void helper(int part);
  void stop() noexcept;
  void run_band(int part);

  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  std::vector<std::thread> helpers_;  // helper k runs band k + 1
  const std::function<void(std::uint64_t, std::uint64_t)>* fn_ = nullptr;
  std::uint64_t count_ = 0;
  int parts_ = 0, pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::exception_ptr> errors_;  // per band
};

class Source;
class Sink;
struct Tile;

// The staged copies of the CUDA engine (engine/cuda/out_of_place.cu), here so
// the CPU-only build compiles and tests them. Each cuts its copy into bands
// of whole rows of at least kTeamBandBytes (plan.hpp) for `team`:
// Reads input tile t into buf (t.h x t.w, ld t.w), in bands of its rows.
void team_read(CopyTeam& team, Source& src, const Tile& t, void* buf, std::size_t es);
// Writes buf, input tile t transposed (t.w x t.h, ld t.h), to the output at
// (t.c0, t.r0), in bands of its rows.
void team_write(CopyTeam& team, Sink& dst, const Tile& t, const void* buf, std::size_t es);

}  // namespace gt
