// A batch's copies: its journal data (gathered where a diagonal tile's
// triangle is not contiguous, written and checksummed in chunks) and its
// tiles' writes to the matrix. Journal.overlap() runs the two at once: they
// go to two files, whose writes do not wait for each other.
#include <algorithm>
#include <cstring>

#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

namespace {

const unsigned char* bytes_of(const void* p) { return static_cast<const unsigned char*>(p); }

}  // namespace

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
  // Chunks of the stream, each written and checksummed in turn.
  const std::size_t chunks = std::size_t((total + kHashChunk - 1) / kHashChunk);
  std::vector<std::uint64_t> sums(chunks);
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::uint64_t lo = c * kHashChunk, hi = std::min(total, lo + kHashChunk);
    StreamHash h;
    for (const Piece& p : pieces) {
      const std::uint64_t a = std::max(lo, p.at), b = std::min(hi, p.at + p.len);
      if (a >= b) continue;
      fmt::pwrite_full(fd_.get(), p.src + (a - p.at), b - a, offset + a, path_);
      h.update(p.src + (a - p.at), std::size_t(b - a));
    }
    sums[c] = h.digest();
  }
  // The disk starts on it now: the sync then waits for the tail.
  if (total) fmt::start_writeback(fd_.get(), offset, total, path_);
  return sum_of_sums(sums);
}

void Journal::write_parts(InplaceMatrix& m, const std::vector<PairWrite>& b_of, const std::vector<PairWrite>& a_of) {
  // One thread: writes to one file take its inode's lock in turn (tmpfs,
  // ext4 and XFS buffered writes alike), so more threads would only wait.
  const std::size_t es = id_.p.elem_size;
  for (const PairWrite& w : b_of) {
    write_b_part(m, w, es, 0, w.pair.b.h);
    m.start_writeback(w.pair.b.r0, w.pair.b.h);  // the flush then finds less to do
    hit(Point::b_tile);
  }
  for (const PairWrite& w : a_of) {
    write_a_part(m, w, es, 0, w.pair.a.h);
    m.start_writeback(w.pair.a.r0, w.pair.a.h);
    hit(Point::a_tile);
  }
}

}  // namespace gt::journal_impl
