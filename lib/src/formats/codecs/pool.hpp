// The codec threads. Jobs come in groups (a tile's chunks): submit() queues
// a group and returns at once; wait() blocks until every job of the group
// has run and rethrows the group's first error (its remaining jobs are then
// only counted off). run() is submit() and wait().
//
// Several callers submit at once (an engine's reader decoding one tile
// while its writer encodes another), and the threads take jobs in the order
// they were queued, whichever group they belong to: one pool serves both
// sides of a run (shared()), so a side's slow chunks never leave threads
// idle while the other side has work, and a tile's last chunks overlap the
// next tile's first.
//
// A job that copies the caller's memory first (an encode) calls
// release_input() once it no longer reads it; wait_released() returns when
// every job of the group has released (or finished), so a writer can hand
// its tile buffer back while the chunks are still being encoded.
//
// `worker` in [0, size()) names the thread, so each keeps buffers of its own.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gt::codecs {

class WorkerPool {
 public:
  using Job = std::function<void(std::size_t job, int worker)>;
  struct Group {  // a batch of jobs; the pool's lock guards the counters
    Job job;
    std::size_t count = 0, next = 0, released = 0, finished = 0;
    std::exception_ptr error;
  };

  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int size() const { return int(threads_.size()); }

  std::shared_ptr<Group> submit(std::size_t n, Job job);
  void wait_released(Group& g);
  // Every job of g finished; rethrows its first error (once).
  void wait(Group& g);
  bool finished(const Group& g);
  void run(std::size_t n, const Job& job);

  // From inside a job: it will not read the caller's memory again.
  static void release_input();

  // The pool of `threads` threads this process runs now, made if none is
  // alive: a run's source and sink ask for the plan's count and share it.
  static std::shared_ptr<WorkerPool> shared(int threads);

 private:
  void loop(int worker);

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::shared_ptr<Group>> queue_;  // groups with jobs not yet started
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gt::codecs
