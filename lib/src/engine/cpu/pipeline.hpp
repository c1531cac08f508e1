// A three-stage pipeline over numbered items: load on a reader thread, work
// on the calling thread, store on a writer thread, with `slots` items in
// flight (item k uses slot k % slots). Loads run in item order on one thread
// and stores likewise, which is what Source and Sink promise to support.
//
// The first exception from any stage stops every stage; the threads are
// joined and the exception is rethrown to the caller.
//
// With `keep` > 0, an item's slot stays taken until the store of the item
// `keep` places later returns (an in-place journal writes a batch's tiles
// with the next two batches): give it keep + 2 slots or more to keep loading
// while storing.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gt::cpu {

class Pipeline {
 public:
  using Stage = std::function<void(std::uint64_t item, int slot)>;
  // Called before each item's work; it throws to stop the pipeline
  // (cancellation).
  using Check = std::function<void()>;

  static void run(std::uint64_t items, int slots, const Stage& load, const Stage& work, const Stage& store,
                  const Check& before_work, int keep = 0);

 private:
  enum class SlotState { free, loaded, worked, kept };
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<SlotState> state;
    bool abort = false;
    std::exception_ptr error;
    // Waits until slot `s` is in `want`; false when the pipeline aborted.
    bool wait_for(int s, SlotState want);
    void set(int s, SlotState to);
    void fail(std::exception_ptr e);
  };
};

}  // namespace gt::cpu
