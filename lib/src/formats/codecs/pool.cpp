#include "formats/codecs/pool.hpp"

#include <algorithm>
#include <utility>

namespace gt::codecs {

namespace {

// The job a pool thread runs now, for release_input().
struct Current {
  WorkerPool::Group* group = nullptr;
  std::mutex* mu = nullptr;
  std::condition_variable* cv = nullptr;
  bool released = false;
};
thread_local Current current;

}  // namespace

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

std::shared_ptr<WorkerPool::Group> WorkerPool::submit(std::size_t n, Job job) {
  auto g = std::make_shared<Group>();
  g->job = std::move(job);
  g->count = n;
  if (n == 0) return g;
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(g);
  }
  work_cv_.notify_all();
  return g;
}

void WorkerPool::wait_released(Group& g) {
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return g.released == g.count; });
}

bool WorkerPool::finished(const Group& g) {
  std::lock_guard<std::mutex> lk(mu_);
  return g.finished == g.count;
}

void WorkerPool::wait(Group& g) {
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return g.finished == g.count; });
  if (g.error) std::rethrow_exception(std::exchange(g.error, nullptr));
}

void WorkerPool::run(std::size_t n, const Job& job) {
  const auto g = submit(n, job);
  wait(*g);
}

void WorkerPool::release_input() {
  Current& c = current;
  if (!c.group || c.released) return;
  c.released = true;
  {
    std::lock_guard<std::mutex> lk(*c.mu);
    ++c.group->released;
  }
  c.cv->notify_all();
}

void WorkerPool::loop(int worker) {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    work_cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const std::shared_ptr<Group> g = queue_.front();
    const std::size_t i = g->next++;
    if (g->next == g->count) queue_.pop_front();
    // After a failure the group's remaining jobs are only counted off.
    const bool skip = bool(g->error);
    lk.unlock();
    std::exception_ptr err;
    current = {g.get(), &mu_, &done_cv_, false};
    if (!skip) {
      try {
        g->job(i, worker);
      } catch (...) {
        err = std::current_exception();
      }
    }
    const bool released = current.released;
    current = {};
    lk.lock();
    if (err && !g->error) g->error = err;
    if (!released) ++g->released;
    ++g->finished;
    done_cv_.notify_all();
  }
}

std::shared_ptr<WorkerPool> WorkerPool::shared(int threads) {
  static std::mutex mu;
  static std::vector<std::weak_ptr<WorkerPool>> pools;
  threads = std::max(1, threads);
  std::lock_guard<std::mutex> lk(mu);
  pools.erase(std::remove_if(pools.begin(), pools.end(), [](const auto& w) { return w.expired(); }), pools.end());
  for (const auto& w : pools)
    if (auto p = w.lock(); p && p->size() == threads) return p;
  auto p = std::make_shared<WorkerPool>(threads);
  pools.push_back(p);
  return p;
}

}  // namespace gt::codecs
