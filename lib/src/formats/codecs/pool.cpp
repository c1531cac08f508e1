#include "formats/codecs/pool.hpp"

#include <algorithm>
#include <utility>

namespace gt::codecs {

WorkerPool::WorkerPool(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this, i] { loop(i); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::run(std::size_t n, const std::function<void(std::size_t, int)>& job) {
  if (n == 0) return;
  std::unique_lock<std::mutex> lk(mu_);
  job_ = &job;
  next_ = 0;
  count_ = n;
  finished_ = 0;
  error_ = nullptr;
  ++batch_;
  work_cv_.notify_all();
  done_cv_.wait(lk, [&] { return finished_ == count_; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void WorkerPool::loop(int worker) {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    work_cv_.wait(lk, [&] { return stop_ || (job_ && next_ < count_); });
    if (stop_) return;
    const std::size_t i = next_++;
    const auto* job = job_;
    // After a failure the remaining jobs are only counted off.
    const bool skip = bool(error_);
    lk.unlock();
    std::exception_ptr err;
    if (!skip) {
      try {
        (*job)(i, worker);
      } catch (...) {
        err = std::current_exception();
      }
    }
    lk.lock();
    if (err && !error_) error_ = err;
    if (++finished_ == count_) done_cv_.notify_all();
  }
}

}  // namespace gt::codecs
