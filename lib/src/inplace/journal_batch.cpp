// A batch's copies: its journal data (written and checksummed in chunks of
// its stream) and its tiles' writes to the matrix. Journal.overlap() runs the two at once: they
// go to two files, whose writes do not wait for each other.
#include <algorithm>

#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

namespace {

const unsigned char* bytes_of(const void* p) { return static_cast<const unsigned char*>(p); }

}  // namespace

std::uint64_t Journal::put_batch_data(const std::vector<PairWrite>& batch, std::uint64_t offset) {
  const std::size_t es = id_.p.elem_size;
  ChunkedHash sum;
  std::uint64_t at = offset;
  const auto put = [&](const unsigned char* p, std::uint64_t n) {
    fmt::pwrite_full(fd_.get(), p, n, at, path_);
    sum.update(p, std::size_t(n));
    at += n;
  };
  for (const PairWrite& w : batch) {
    if (!w.pair.diagonal()) {
      put(bytes_of(w.new_b), journal_bytes_of(w.pair, es));
      continue;
    }
    // A diagonal tile's lower triangle, row by row from new_b (gathering it
    // first would touch a fresh buffer of half a tile: page faults cost more
    // than the extra calls).
    const std::uint64_t side = w.pair.a.h;
    for (std::uint64_t i = 1; i < side; ++i) put(bytes_of(w.new_b) + i * side * es, i * es);
  }
  // The disk starts on it now: the sync then waits for the tail.
  if (at > offset) fmt::start_writeback(fd_.get(), offset, at - offset, path_);
  return sum.digest();
}

void Journal::write_parts(InplaceMatrix& m, const std::vector<PairWrite>& b_of, const std::vector<PairWrite>& a_of) {
  // One thread: writes to one file take its inode's lock in turn (tmpfs,
  // ext4 and XFS buffered writes alike), so more threads would only wait.
  // The parts go in file order, a band of tile rows at a time, and each
  // band's write-back starts once all its parts are in the page cache: a
  // step's tiles a lie side by side in one band, and started together their
  // rows go to the disk as long runs, where a tile started alone is one
  // short piece per row. Any order is safe: the parts are disjoint and the
  // flush after them is what the protocol waits for.
  struct Part {
    const PairWrite* w;
    bool b;
    const Tile& tile() const { return b ? w->pair.b : w->pair.a; }
  };
  std::vector<Part> parts;
  parts.reserve(b_of.size() + a_of.size());
  for (const PairWrite& w : b_of) parts.push_back({&w, true});
  for (const PairWrite& w : a_of) parts.push_back({&w, false});
  std::stable_sort(parts.begin(), parts.end(), [](const Part& x, const Part& y) {
    return x.tile().r0 != y.tile().r0 ? x.tile().r0 < y.tile().r0 : x.tile().c0 < y.tile().c0;
  });
  const std::size_t es = id_.p.elem_size;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    if (p.b) {
      write_b_part(m, *p.w, es);
      hit(Point::b_tile);
    } else {
      write_a_part(m, *p.w, es);
      hit(Point::a_tile);
    }
    const Tile& t = p.tile();
    if (i + 1 == parts.size() || parts[i + 1].tile().r0 != t.r0) m.start_writeback(t.r0, t.h);
  }
}

}  // namespace gt::journal_impl
