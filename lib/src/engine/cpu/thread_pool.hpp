// A fork-join pool for the CPU transposer. The engine transposes one tile
// after another, so threads are created once and reused rather than spawned
// per call.
#pragma once
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gt::cpu {

class ThreadPool {
 public:
  ThreadPool() = default;
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Runs fn(0) .. fn(n-1) at once on n threads, the caller running fn(0), and
  // returns when all have finished. Callers from different threads take
  // turns; a call from inside a job runs its n parts one after another on
  // the calling thread (no deadlock). fn must not throw.
  void run(int n, const std::function<void(int)>& fn);

  // The process-wide pool shared by cpu_transpose and parallel_memcpy.
  static ThreadPool& shared();

 private:
  void worker(int index);

  std::mutex call_mu_;  // one run() at a time
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  std::vector<std::thread> workers_;  // worker k runs part k+1
  const std::function<void(int)>* job_ = nullptr;
  int parts_ = 0;
  int pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

// threads <= 0 means the machine's hardware concurrency (at least 1).
int resolve_threads(int threads);

// Runs fn(lo, hi) over [0, count) cut into one contiguous band per thread
// (threads as resolve_threads) on the shared pool: the benches' fill, poison
// and verify loops.
template <class F>
void parallel_bands(std::uint64_t count, int threads, F&& fn) {
  const int n = int(std::min<std::uint64_t>(count, std::uint64_t(resolve_threads(threads))));
  ThreadPool::shared().run(n > 0 ? n : 1, [&](int k) {
    const std::uint64_t lo = count * std::uint64_t(k) / std::uint64_t(n), hi = count * std::uint64_t(k + 1) / std::uint64_t(n);
    if (lo < hi) fn(lo, hi);
  });
}

}  // namespace gt::cpu
