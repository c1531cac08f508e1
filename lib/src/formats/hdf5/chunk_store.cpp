#include "formats/hdf5/chunk_store.hpp"

#include <fcntl.h>

#include <chrono>
#include <cstring>
#include <utility>

#include "formats/hdf5/chunks.hpp"
#include "gtranspose/plan.hpp"

namespace gt::fmt::h5 {

namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t ns_since(Clock::time_point t0) {
  return std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

}  // namespace

ChunkStore::ChunkStore(hid_t dset, Shape chunk, int fd, int slots, std::size_t slot_bytes, Namer name,
                       ChunkCounters& n)
    : dset_(dset), chunk_(chunk), fd_(fd), slot_bytes_(slot_bytes), name_(std::move(name)), n_(n) {
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

void ChunkStore::write_now(std::uint64_t i, std::uint64_t j, const void* data, std::size_t n, unsigned mask) {
  const auto t0 = Clock::now();
  std::lock_guard<std::mutex> h5(h5_mu_);
  const auto t1 = Clock::now();
  n_.lock_ns += std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  {
    auto lk = serial();
    quiet();
    hsize_t off[2] = {i * chunk_.rows, j * chunk_.cols};
    if (H5Dwrite_chunk(dset_, H5P_DEFAULT, mask, off, n, data) < 0) fail(ErrorKind::io, "cannot write " + name_(i, j));
  }
  n_.io_ns += ns_since(t1);
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
        write_now(it.i, it.j, slots_[std::size_t(it.slot)].data(), it.size, it.mask);
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
