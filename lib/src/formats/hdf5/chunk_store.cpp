#include "formats/hdf5/chunk_store.hpp"

#include <fcntl.h>

#include <cstring>
#include <utility>

#include "formats/hdf5/chunks.hpp"
#include "gtranspose/plan.hpp"

namespace gt::fmt::h5 {

ChunkStore::ChunkStore(int fd, int slots, std::size_t slot_bytes, Write write, ChunkCounters& n)
    : fd_(fd), slot_bytes_(slot_bytes), write_(std::move(write)), n_(n) {
  slots_.resize(std::size_t(std::max(1, slots)));
  for (int s = 0; s < int(slots_.size()); ++s) free_.push_back(s);
  thread_ = std::thread([this] { loop(); });
}

ChunkStore::~ChunkStore() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ChunkStore::rethrow_locked() {
  if (error_) std::rethrow_exception(error_);
}

void ChunkStore::put(std::uint64_t i, std::uint64_t j, const codecs::Coded& e, codecs::WorkBuffers& w) {
  int s = 0;
  {
    const auto t0 = Clock::now();
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return !free_.empty() || error_; });
    n_.store_wait_ns += ns_since(t0);
    rethrow_locked();
    s = free_.back();
    free_.pop_back();
  }
  // The slot is this thread's until queued: no lock needed to fill it.
  std::vector<std::uint8_t>& slot = slots_[std::size_t(s)];
  if (e.data == w.a.data()) {
    slot.swap(w.a);
  } else if (e.data == w.b.data()) {
    slot.swap(w.b);
  } else {
    if (slot.size() < slot_bytes_) slot.resize(slot_bytes_);
    std::memcpy(slot.data(), e.data, e.size);
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back({i, j, e.size, e.mask, s});
  }
  cv_.notify_all();
}

void ChunkStore::flush() {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return (queue_.empty() && !busy_) || error_; });
  rethrow_locked();
}

void ChunkStore::loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const Item it = queue_.front();
    queue_.pop_front();
    busy_ = true;
    const bool failed = bool(error_);
    lk.unlock();
    std::exception_ptr err;
    // After a failed store the rest are only dropped: the run is failing.
    if (!failed) {
      try {
        write_(it.i, it.j, slots_[std::size_t(it.slot)].data(), it.size, it.mask);
        if ((unsynced_ += it.size) >= kChunkWritebackBytes && fd_ >= 0) {
          unsynced_ = 0;
          // A hint: an error is the closing fsync's to report.
          (void)::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
        }
      } catch (...) {
        err = std::current_exception();
      }
    }
    lk.lock();
    busy_ = false;
    free_.push_back(it.slot);
    if (err && !error_) error_ = err;
    cv_.notify_all();
  }
}

}  // namespace gt::fmt::h5
