#include "engine/cpu/pipeline.hpp"

#include <stdexcept>

namespace gt::cpu {

bool Pipeline::Shared::wait_for(int s, SlotState want) {
  std::unique_lock<std::mutex> lk(mu);
  cv.wait(lk, [&] { return abort || state[s] == want; });
  return !abort;
}

void Pipeline::Shared::set(int s, SlotState to) {
  {
    std::lock_guard<std::mutex> lk(mu);
    state[s] = to;
  }
  cv.notify_all();
}

void Pipeline::Shared::fail(std::exception_ptr e) {
  {
    std::lock_guard<std::mutex> lk(mu);
    if (!error) error = e;
    abort = true;
  }
  cv.notify_all();
}

void Pipeline::run(std::uint64_t items, int slots, const Stage& load, const Stage& work, const Stage& store,
                   const Check& before_work, bool keep_stored) {
  if (items == 0) return;
  if (slots < 1) slots = 1;
  if (keep_stored && slots < 2) throw std::logic_error("Pipeline: keeping a stored item needs two slots or more");
  Shared sh;
  sh.state.assign(slots, SlotState::free);

  auto stage_loop = [&](const Stage& fn, SlotState from, SlotState to) {
    const bool keep = keep_stored && &fn == &store;
    try {
      for (std::uint64_t k = 0; k < items; ++k) {
        const int s = int(k % slots);
        if (!sh.wait_for(s, from)) return;
        fn(k, s);
        if (!keep) {
          sh.set(s, to);
        } else {
          sh.set(s, SlotState::kept);  // freed once the next item's store returns
          if (k > 0) sh.set(int((k - 1) % slots), to);
        }
      }
    } catch (...) {
      sh.fail(std::current_exception());
    }
  };

  std::thread reader(stage_loop, std::cref(load), SlotState::free, SlotState::loaded);
  std::thread writer;
  try {
    writer = std::thread(stage_loop, std::cref(store), SlotState::worked, SlotState::free);
  } catch (...) {
    sh.fail(std::current_exception());
  }
  if (writer.joinable()) {
    try {
      for (std::uint64_t k = 0; k < items; ++k) {
        const int s = int(k % slots);
        if (before_work) before_work();
        if (!sh.wait_for(s, SlotState::loaded)) break;
        work(k, s);
        sh.set(s, SlotState::worked);
      }
    } catch (...) {
      sh.fail(std::current_exception());
    }
  }
  reader.join();
  if (writer.joinable()) writer.join();
  if (sh.error) std::rethrow_exception(sh.error);
}

}  // namespace gt::cpu
