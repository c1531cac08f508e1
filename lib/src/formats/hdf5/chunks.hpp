// Direct chunk I/O: a chunked dataset's chunks moved by pread/pwrite at the
// offsets HDF5 reports (H5Dget_chunk_info_by_coord), or by H5Dwrite_chunk,
// and decoded or encoded by our codecs on a pool of threads, outside
// HDF5's global lock. HDF5 is asked only where each chunk is (one short
// call per chunk, under the lock: a source asks for all of them once, at
// its first read, where plan_chunk_table allows) and, for a compressed
// output, to store each chunk (one store thread: chunk_store.hpp); the
// bytes never pass through its filter pipeline or its chunk cache.
//
// Used only for a dataset whose every filter is one of our codecs and whose
// data lies in the file that was opened (stored_in); anything else goes
// through the library (hyperslab_io).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "formats/codecs/pipeline.hpp"
#include "formats/codecs/pool.hpp"
#include "formats/hdf5/chunk_store.hpp"
#include "formats/hdf5/hdf5_internal.hpp"
#include "gtranspose/report.hpp"

namespace gt::fmt::h5 {

// The filter pipeline of a dataset creation property list, in HDF5's order;
// false (with `why`) when HDF5 cannot describe a filter.
bool filters_of(hid_t dcpl, std::vector<codecs::FilterSpec>& out, std::string* why);

// True when `dset`'s data lies in the file at `path` itself, so that the
// offsets HDF5 gives for it are offsets in that file: the dataset's own file
// (not another one reached through an external link) is `path` (same device
// and inode), opened with the POSIX (sec2) driver.
bool stored_in(hid_t dset, const std::string& path);

// What a chunk address (H5Dget_chunk_info) must be added to for a file
// offset: HDF5 before 1.14.4 leaves the user block out of it (HDF5 issue
// 3003), while H5Dget_offset includes it.
std::uint64_t chunk_address_base(hid_t file);

// Chunk-level statistics, added to from every codec thread, in nanoseconds
// since a time point (ns_since).
using Clock = std::chrono::steady_clock;
inline std::uint64_t ns_since(Clock::time_point t0) {
  return std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}
struct ChunkCounters {
  std::atomic<std::uint64_t> codec_cpu_ns{0};  // CPU time of the threads inside codecs (CLOCK_THREAD_CPUTIME_ID)
  std::atomic<std::uint64_t> codec_ns{0};      // wall time inside codecs, summed over threads
  std::atomic<std::uint64_t> io_ns{0};         // wall time in pread/pwrite and H5Dwrite_chunk (its lock included)
  std::atomic<std::uint64_t> lock_ns{0};       // of io_ns, waiting for HDF5's lock before H5Dwrite_chunk
  std::atomic<std::uint64_t> store_wait_ns{0}; // codec threads waiting for a free store slot (the store is the limit)
  std::atomic<std::uint64_t> locate_ns{0};     // the reader's HDF5 chunk lookups (its lock included)
  std::atomic<std::uint64_t> wait_ns{0};       // the caller's wait for its chunks (read: decoded; write: taken)
  std::atomic<std::uint64_t> raw{0};       // decoded bytes (whole chunks)
  std::atomic<std::uint64_t> stored{0};    // bytes as stored in the file
  std::atomic<std::uint64_t> chunks{0};
};

class ChunkIo {
 public:
  struct Setup {
    hid_t dset = -1;           // the dataset (valid while this lives)
    int fd = -1;               // its file, for pread / pwrite
    std::uint64_t base = 0;    // chunk_address_base of its file
    Shape shape, chunk;
    std::size_t elem_size = 0;
    codecs::Pipeline pipeline;
    std::vector<unsigned char> fill;  // one element's fill value (unallocated chunks)
    int threads = 0;           // codec threads; 0: run on the caller's thread
    bool table = false;        // a source: its chunk index read once (plan_chunk_table decides)
    bool store_thread = false; // an output: compressed chunks stored by one thread (ChunkStore)
    std::string what;          // "dataset /x in f.h5", for messages
  };
  explicit ChunkIo(Setup s);
  ~ChunkIo();

  // Reads any rectangle: every chunk it touches is read whole, decoded, and
  // its part copied out (tiles of whole chunks decode each chunk once).
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst, std::uint64_t ld);
  // True when the rectangle covers whole chunks (clipped at the edges).
  bool aligned(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w) const;
  // Writes an aligned rectangle: unfiltered chunks by pwrite at their
  // (early allocated) offsets, filtered ones encoded and stored with
  // H5Dwrite_chunk. `in_place`: only unfiltered chunks, any rectangle.
  // On codec threads, filtered chunks are encoded and stored after the call
  // returns (it waits only until each chunk is copied out of `src`); the
  // write that completes the dataset, and drain(), wait for all of them.
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src, std::uint64_t ld);
  // Stores chunk (i, j) as another process encoded it with this pipeline
  // (n bytes, filters `mask` skipped); unfiltered, the whole chunk as laid
  // out in memory (edges padded). From any thread.
  void store_encoded(std::uint64_t i, std::uint64_t j, const void* data, std::size_t n, unsigned mask);

  // Waits for the chunks write() left encoding; rethrows their first error.
  void drain();

  int threads() const { return threads_; }
  // The bytes of the chunk index a source reads once (0 when it looks
  // chunks up tile by tile): counted in its reserve, inside {host_mem}.
  std::uint64_t table_bytes() const { return s_.table ? total_chunks_ * sizeof(Entry) : 0; }
  // Codec threads: the process's pool of n (WorkerPool::shared), so a
  // source and a sink given the same count share them; 0: the caller's.
  void set_threads(int n);
  // Host memory one codec thread holds: two work buffers and the codecs'
  // state (none unfiltered), and an output's store slot.
  // `writing`: as an output of these chunks would (a store slot more).
  std::uint64_t bytes_per_thread(bool writing) const;
  std::uint64_t bytes_per_thread() const { return bytes_per_thread(s_.store_thread); }
  bool filtered() const { return !s_.pipeline.empty(); }
  bool compressed() const { return s_.pipeline.compresses(); }
  std::uint64_t chunk_bytes() const { return chunk_bytes_; }
  // "direct chunks, shuffle+deflate(4) on 16 threads: 1.00 GiB from 412 MiB stored (2.49:1), 30.2 s of codec time"
  std::string note(const char* verb) const;
  // The "decode" or "encode" stage: codec thread-seconds and decoded bytes.
  StageStat stage(const char* name) const;

 private:
  struct Ref {
    std::uint64_t i = 0, j = 0;     // chunk coordinates (in chunks)
    std::uint64_t addr = 0, size = 0;
    unsigned mask = 0;
    bool present = false;
  };
  struct Span {  // the part of a chunk a rectangle covers, in matrix coordinates
    std::uint64_t r0, r1, c0, c1;
  };
  struct Entry {  // a chunk of the table: what lookup() found
    std::uint64_t addr = 0, size = 0;
    unsigned mask = 0;
    bool present = false;
  };
  std::vector<Ref> locate(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w);
  // Where chunk (i, j) is, asked of HDF5 (the caller holds serial()).
  Ref lookup(std::uint64_t i, std::uint64_t j) const;
  void build_table();
  Span span_of(const Ref& c, std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w) const;
  void run(std::size_t jobs, const codecs::WorkerPool::Job& job);
  void prepare_buffers();
  // Rethrows the first error of a finished write; `all`: waits for every one.
  void reap(bool all);
  codecs::WorkBuffers& buffers(int worker);
  std::string chunk_text(const Ref& c) const;
  void read_chunk(const Ref& c, const Span& s, unsigned char* dst, std::uint64_t r0, std::uint64_t c0,
                  std::uint64_t ld, int worker);
  // An unfiltered chunk's part straight between the file and memory (its
  // first row at `first`, rows `stride` bytes apart).
  void unfiltered(bool write, const Ref& c, const Span& s, unsigned char* first, std::uint64_t stride);
  // H5Dwrite_chunk on the calling thread: the store thread's, or any
  // thread's where there is none (HDF5's lock, serial(), orders them).
  void store_now(std::uint64_t i, std::uint64_t j, const void* data, std::size_t n, unsigned mask);
  void write_chunk(const Ref& c, const Span& s, const unsigned char* src, std::uint64_t r0, std::uint64_t c0,
                   std::uint64_t ld, int worker);

  Setup s_;
  std::uint64_t chunk_bytes_ = 0;
  int threads_ = 0;
  std::shared_ptr<codecs::WorkerPool> pool_;
  std::mutex pending_mu_;
  std::deque<std::shared_ptr<codecs::WorkerPool::Group>> pending_;  // writes still encoding
  std::uint64_t total_chunks_ = 0, submitted_ = 0;                   // filtered chunks written so far
  std::vector<codecs::WorkBuffers> bufs_;  // one per worker (or one for the caller)
  std::vector<Entry> table_;               // every chunk, row by row of chunks (Setup::table)
  std::uint64_t chunk_cols_ = 0;           // chunks across
  std::unique_ptr<ChunkStore> store_;      // filtered writes on codec threads (Setup::store_thread)
  ChunkCounters n_;
};

}  // namespace gt::fmt::h5
