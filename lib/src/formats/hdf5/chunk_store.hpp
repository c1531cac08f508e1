// The store thread of a compressed output on the direct chunk path: codec
// threads hand it their encoded chunks and go back to encoding (or
// decoding the next tile), and it alone calls H5Dwrite_chunk for them
// (through ChunkIo::store_now, the one place that calls it), one chunk
// after another.
//
// Why: H5Dwrite_chunk runs under HDF5's global lock (the thread-safe
// build's, or ours), so its calls are serial whoever makes them. Made from
// the codec threads, every thread that finished a chunk waited there for
// the others' stores: on the 16-core machine (run 64) lz4's threads spent
// 2.5 thread-seconds in H5Dwrite_chunk in a 0.68 s run, threads the next
// tile's decode queued behind. Here only the store thread waits, and the
// codec threads wait only when every queue slot is taken (the store is
// then the run's limit, and the report says so).
//
// Each slot holds one encoded chunk; the encoding thread swaps its work
// buffer with a free slot's (no copy) where the chunk lies at the start of
// one. Slots: as many as codec threads, one buffer each (the plan counts
// them: ChunkIo::bytes_per_thread).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "formats/codecs/pipeline.hpp"

namespace gt::fmt::h5 {

struct ChunkCounters;

class ChunkStore {
 public:
  // Stores chunk (i, j): `data` is n bytes, filters `mask` skipped
  // (ChunkIo::store_now: H5Dwrite_chunk under HDF5's lock, timed).
  using Write = std::function<void(std::uint64_t i, std::uint64_t j, const void* data, std::size_t n, unsigned mask)>;
  // `fd`: the file, to start its write-back every kChunkWritebackBytes
  // stored (-1: none).
  ChunkStore(int fd, int slots, std::size_t slot_bytes, Write write, ChunkCounters& n);
  // Stops the thread; chunks still queued are dropped (an abandoned run).
  ~ChunkStore();
  ChunkStore(const ChunkStore&) = delete;
  ChunkStore& operator=(const ChunkStore&) = delete;

  // From a codec thread: queues chunk (i, j) as `e` encoded it in `w`
  // (taking the buffer it lies in, and leaving an empty one in its place).
  // Waits for a free slot; rethrows a store error that is pending.
  void put(std::uint64_t i, std::uint64_t j, const codecs::Coded& e, codecs::WorkBuffers& w);
  // Waits until every queued chunk is stored; rethrows the first error.
  void flush();

 private:
  struct Item {
    std::uint64_t i = 0, j = 0;
    std::size_t size = 0;
    unsigned mask = 0;
    int slot = 0;
  };
  void loop();
  void rethrow_locked();

  int fd_;
  std::uint64_t unsynced_ = 0;  // bytes stored since write-back was last started (the thread's)
  std::size_t slot_bytes_;
  Write write_;
  ChunkCounters& n_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<std::uint8_t>> slots_;
  std::vector<int> free_;
  std::deque<Item> queue_;
  bool busy_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace gt::fmt::h5
