#include "engine/cpu/thread_pool.hpp"

#include "gtranspose/machine.hpp"

namespace gt::cpu {

namespace {
thread_local bool t_in_job = false;
}

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  return int(usable_cores());
}

ThreadPool& ThreadPool::shared() {
  static ThreadPool pool;
  return pool;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker(int index) {
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* job;
    int part = index + 1;
    {
      std::unique_lock<std::mutex> lk(mu_);
      start_cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (part >= parts_) continue;
      job = job_;
    }
    t_in_job = true;
    (*job)(part);
    t_in_job = false;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::run(int n, const std::function<void(int)>& fn) {
  if (n <= 1 || t_in_job) {
    for (int i = 0; i < (n < 1 ? 1 : n); ++i) fn(i);
    return;
  }
  std::lock_guard<std::mutex> call(call_mu_);
  {
    std::lock_guard<std::mutex> lk(mu_);
    while (int(workers_.size()) < n - 1) {
      int idx = int(workers_.size());
      workers_.emplace_back([this, idx] { worker(idx); });
    }
    job_ = &fn;
    parts_ = n;
    pending_ = n - 1;
    ++generation_;
  }
  start_cv_.notify_all();
  t_in_job = true;
  fn(0);
  t_in_job = false;
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return pending_ == 0; });
  job_ = nullptr;
}

}  // namespace gt::cpu
