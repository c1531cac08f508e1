#include "engine/cpu/pipeline.hpp"

#include <algorithm>
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
                   const Check& before_work, int keep) {
  if (items == 0) return;
  if (slots < 1) slots = 1;
  if (keep > 0 && std::uint64_t(slots) < std::min<std::uint64_t>(items, std::uint64_t(keep) + 1))
    throw std::logic_error("Pipeline: keeping stored items needs a slot more than it keeps");
  Shared sh;
  sh.state.assign(slots, SlotState::free);

  auto stage_loop = [&](const Stage& fn, SlotState from, SlotState to) {
    const std::uint64_t kept = &fn == &store ? std::uint64_t(std::max(0, keep)) : 0;
    try {
      for (std::uint64_t k = 0; k < items; ++k) {
        const int s = int(k % slots);
        if (!sh.wait_for(s, from)) return;
        fn(k, s);
        if (kept == 0) {
          sh.set(s, to);
        } else {
          sh.set(s, SlotState::kept);  // freed once the store `kept` items later returns
          if (k >= kept) sh.set(int((k - kept) % slots), to);
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
