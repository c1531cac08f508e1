// The codec threads of one source or sink: run(n, job) runs job(i, worker)
// for i in [0, n) on the pool's threads and returns when all are done, so a
// tile's chunks decode (or encode) side by side while the caller (an
// engine's reader or writer thread) waits. `worker` in [0, size()) names the
// thread, so each keeps buffers of its own. The first exception stops the
// remaining jobs and is rethrown to the caller.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gt::codecs {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int size() const { return int(threads_.size()); }
  // One caller at a time.
  void run(std::size_t n, const std::function<void(std::size_t job, int worker)>& job);

 private:
  void loop(int worker);

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(std::size_t, int)>* job_ = nullptr;  // the batch running, or null
  std::size_t next_ = 0, count_ = 0, finished_ = 0;
  std::uint64_t batch_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gt::codecs
