// The streaming engine's ring: free slots, the next item to read and to
// write, and the items queued on the GPU. Reader threads take a free slot
// together with the next item number, so a slot is never held by an item the
// writers cannot reach yet (no deadlock however the readers interleave);
// writers take items in order. Every wait ends early when the run aborts.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <mutex>

namespace gt::cuda {

class Ring {
 public:
  // The number of items is known once the plan is.
  void set_items(std::uint64_t items) { items_ = items; }
  void add_slot(int s);
  // A free slot and the next item, taken together; false when all items are
  // taken or the run aborted.
  [[nodiscard]] bool take(int& slot, std::uint64_t& item);
  // Item `item` is on the GPU in `slot`.
  void queued(std::uint64_t item, int slot);
  // The next item in order, once it is queued; false when all are written
  // or the run aborted.
  [[nodiscard]] bool next(std::uint64_t& item, int& slot);
  // The slot of the next item in order if it is queued already (one writer
  // thread only: the in-place batcher); -1 otherwise. take_peeked() claims it.
  int peek();
  std::uint64_t take_peeked();
  void release(int slot);
  // Stops every wait; the first error is kept for the caller (nullptr: a
  // stop without an error).
  void fail(std::exception_ptr e);
  bool aborted();
  std::exception_ptr error();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> free_;
  std::map<std::uint64_t, int> ready_;
  std::uint64_t items_ = 0, next_read_ = 0, next_write_ = 0;
  bool abort_ = false;
  std::exception_ptr error_;
};

}  // namespace gt::cuda
