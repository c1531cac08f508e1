// A batch's copies, on several threads: its journal data (written and
// checksummed in chunks, so any thread can take any chunk) and its tiles'
// writes to the matrix (in row bands, where the matrix takes positioned I/O
// from several threads). Through a journal the one writer thread used to do
// every copy of the run itself; on a page cache that is what bounded it.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

namespace {

// Below this many bytes a batch is copied on the calling thread: starting
// threads would cost more than they save (the tests' tiny tiles).
constexpr std::uint64_t kParallelBytes = std::uint64_t(4) << 20;

const unsigned char* bytes_of(const void* p) { return static_cast<const unsigned char*>(p); }

}  // namespace

void Journal::parallel(std::size_t n, std::uint64_t bytes, const std::function<void(std::size_t)>& fn) {
  const std::size_t threads = std::min<std::size_t>(n, std::size_t(std::max(1, threads_)));
  if (threads <= 1 || bytes < kParallelBytes) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex mu;
  const auto work = [&] {
    try {
      for (std::size_t i; (i = next++) < n;) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu);
      if (!error) error = std::current_exception();
      next = n;
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

std::uint64_t Journal::put_batch_data(const std::vector<PairWrite>& batch, std::uint64_t offset) {
  const std::size_t es = id_.p.elem_size;
  // The journal stream as pieces of contiguous memory; a diagonal tile's
  // lower triangle is gathered first (its rows are not contiguous in new_b).
  struct Piece {
    const unsigned char* src;
    std::uint64_t at, len;  // place in the stream
  };
  std::vector<Piece> pieces;
  gathered_.resize(batch.size());
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const PairWrite& w = batch[k];
    const std::uint64_t n = journal_bytes_of(w.pair, es);
    if (n == 0) continue;
    if (!w.pair.diagonal()) {
      pieces.push_back({bytes_of(w.new_b), total, n});
    } else {
      const std::uint64_t side = w.pair.a.h;
      gathered_[k].resize(std::size_t(n));
      for (std::uint64_t i = 1, o = 0; i < side; o += i * es, ++i)
        std::memcpy(gathered_[k].data() + o, bytes_of(w.new_b) + i * side * es, std::size_t(i * es));
      pieces.push_back({gathered_[k].data(), total, n});
    }
    total += n;
  }
  // Chunks of the stream, each written and hashed by whichever thread takes it.
  const std::size_t chunks = std::size_t((total + kHashChunk - 1) / kHashChunk);
  std::vector<std::uint64_t> sums(chunks);
  parallel(chunks, total, [&](std::size_t c) {
    const std::uint64_t lo = c * kHashChunk, hi = std::min(total, lo + kHashChunk);
    StreamHash h;
    for (const Piece& p : pieces) {
      const std::uint64_t a = std::max(lo, p.at), b = std::min(hi, p.at + p.len);
      if (a >= b) continue;
      fmt::pwrite_full(fd_.get(), p.src + (a - p.at), b - a, offset + a, path_);
      h.update(p.src + (a - p.at), std::size_t(b - a));
    }
    sums[c] = h.digest();
  });
  // The disk starts on it now: the sync then waits for the tail.
  if (total) fmt::start_writeback(fd_.get(), offset, total, path_);
  return sum_of_sums(sums);
}

void Journal::write_parts(InplaceMatrix& m, const std::vector<PairWrite>& b_of, const std::vector<PairWrite>& a_of) {
  const std::size_t es = id_.p.elem_size;
  // Every write of the two batches touches other elements: any order, any
  // thread, in row bands where the matrix takes calls from several threads.
  struct Job {
    const PairWrite* w;
    bool b_part;
    std::uint64_t r0, r1;  // rows of the tile
  };
  std::vector<Job> jobs;
  std::uint64_t bytes = 0;
  const std::uint64_t parts = m.concurrent_io() ? std::uint64_t(std::max(1, threads_)) : 1;
  const auto add = [&](const PairWrite& w, bool b_part) {
    const Tile& t = b_part ? w.pair.b : w.pair.a;
    const std::uint64_t rows = std::max<std::uint64_t>(1, (t.h + parts - 1) / parts);
    for (std::uint64_t r = 0; r < t.h; r += rows) jobs.push_back({&w, b_part, r, std::min(t.h, r + rows)});
    bytes += t.elems() * es;
  };
  for (const PairWrite& w : b_of) add(w, true);
  for (const PairWrite& w : a_of) add(w, false);
  const auto run = [&](const Job& j) {
    if (j.b_part)
      write_b_part(m, *j.w, es, j.r0, j.r1);
    else
      write_a_part(m, *j.w, es, j.r0, j.r1);
  };
  const auto done = [&](const Job& j) {
    const Tile& t = j.b_part ? j.w->pair.b : j.w->pair.a;
    m.start_writeback(t.r0, t.h);  // the flush then finds less to do
    hit(j.b_part ? Point::b_tile : Point::a_tile);
  };
  if (parts > 1 && bytes >= kParallelBytes) {
    parallel(jobs.size(), bytes, [&](std::size_t i) { run(jobs[i]); });
    for (const Job& j : jobs)
      if (j.r1 == (j.b_part ? j.w->pair.b.h : j.w->pair.a.h)) done(j);
    return;
  }
  // One thread: each tile's point right after its writes (the crash tests stop there).
  for (const Job& j : jobs) {
    run(j);
    if (j.r1 == (j.b_part ? j.w->pair.b.h : j.w->pair.a.h)) done(j);
  }
}

}  // namespace gt::journal_impl
