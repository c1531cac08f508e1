// A general shape's band stages through the journal (inplace/bands.hpp says
// what each stage does to a band).
//
// Per band, in order:
//   1. read the band, permute it in memory, checksum it as it was (a_sum)
//      and as it becomes (data_sum);
//   2. its new content to a journal region clear of the band the durable
//      header names, then a header (kBand, the band, both checksums, `done`
//      = the band's first row or column), one sync;
//   3. the new content to the matrix, one flush.
// The next band's header replaces this one only after that flush, so a
// durable header always names the one band whose matrix writes may be
// incomplete, and its new content is durable: recovery writes it again (a
// redo is idempotent), flushes, and the run goes on after it. Journal data
// that fails its checksum (the header reached the disk, the data did not,
// or the journal was damaged since) is accepted only where the matrix
// proves what happened: the band still hashes to a_sum (never written: it
// starts over) or to data_sum (complete). Two syncs a band; the power-loss
// test removes each (band_synced, band_flushed, band_redone) and finds a
// loss.
#include <algorithm>
#include <vector>

#include "inplace/bands.hpp"
#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

namespace {

// Band b in pieces of at most max_bytes, in the order its bytes lie in the
// journal (row-major): fn(r0, c0, h, w, offset in the band's data). Whole
// band rows where one fits, else pieces of one.
template <class F>
void for_pieces(const bands::Band& b, std::size_t es, std::uint64_t max_bytes, F&& fn) {
  const std::uint64_t row = b.w * es;
  if (row <= max_bytes) {
    const std::uint64_t k = max_bytes / row;
    for (std::uint64_t i = 0; i < b.h; i += k) fn(b.r0 + i, b.c0, std::min(k, b.h - i), b.w, i * row);
    return;
  }
  const std::uint64_t per = std::max<std::uint64_t>(1, max_bytes / es);
  for (std::uint64_t i = 0; i < b.h; ++i)
    for (std::uint64_t j = 0; j < b.w; j += per) fn(b.r0 + i, b.c0 + j, 1, std::min(per, b.w - j), i * row + j * es);
}

std::string band_text(InplaceStage::Kind k, const BatchRecord& b) {
  const char* what = k == InplaceStage::row_shuffle ? "rows " : "columns ";
  return what + std::to_string(b.first) + "-" + std::to_string(b.end() - 1);
}

}  // namespace

void Journal::band_step(InplaceMatrix& whole, const BandPlan& plan) {
  const InplaceStage::Kind k = stages_[stage_].kind;
  if (!is_band_stage(k)) throw Error(ErrorKind::internal, "journal: not a band stage");
  const Shape s = shape();
  const std::size_t es = id_.p.elem_size;
  const rect::Maps maps = rect::make_maps(s.rows, s.cols);
  const std::uint64_t n = bands::extent(k, s), per = std::max<std::uint64_t>(1, bands::per_band(k, plan));
  const std::uint64_t most = bands::band_of(k, s, 0, std::min(per, n)).elems() * es;
  if (band_was_.size() < most) {
    band_was_ = cpu::HostBuffer();  // the old one first: never both at once
    band_now_ = cpu::HostBuffer();
    band_was_ = cpu::HostBuffer(std::size_t(std::max(most, plan.band_bytes)));
    band_now_ = cpu::HostBuffer(band_was_.size());
  }
  unsigned char* was = band_was_.data();
  unsigned char* now = band_now_.data();
  // Two regions of the plan's largest band take turns; a resumed run whose
  // plan differs from the one that left its live band finds room after it.
  const auto place_band = [&](std::uint64_t bytes) {
    const std::uint64_t live0 = h_.cur.offset, live1 = h_.cur.offset + h_.cur.bytes;
    for (std::uint64_t o : {kDataOffset, kDataOffset + plan.band_bytes})
      if (!(h_.p.phase & kBand) || o + bytes <= live0 || o >= live1) return o;
    return place(bytes);
  };
  for (std::uint64_t x = resuming() ? start_ : 0; x < n;) {
    const std::uint64_t count = std::min(per, n - x);
    const bands::Band b = bands::band_of(k, s, x, count);
    const std::uint64_t bytes = b.elems() * es;
    timed(band_read_secs_, [&] { whole.read(b.r0, b.c0, b.h, b.w, was, b.w); });
    BatchRecord rec{};
    rec.first = x;
    rec.count = count;
    rec.bytes = bytes;
    timed(band_permute_secs_, [&] {
      bands::permute_band(k, maps, b, was, now, es, plan);
      rec.a_sum = chunked_digest(was, bytes, plan.threads);
      rec.data_sum = chunked_digest(now, bytes, plan.threads);
    });
    // A general shape's journal starts here, after its buffers and its first
    // band's read: a failure before leaves no journal behind.
    if (!created_) create(0, 0);
    rec.offset = place_band(bytes);
    reserve(rec.offset + bytes);
    timed([&] { fmt::pwrite_full(fd_.get(), now, bytes, rec.offset, path_); });
    bytes_ += bytes;
    hit(Point::data_written);
    Header h = h_;
    h.p.phase = kBand;
    h.stage = stage_;
    h.done = x;
    h.prev = h.saved = {};
    h.cur = rec;
    put_header(h);
    hit(Point::saved_written);
    sync_journal(Barrier::band_synced);
    hit(Point::saved_synced);
    timed(matrix_secs_, [&] { whole.write(b.r0, b.c0, b.h, b.w, now, b.w); });
    hit(Point::b_tile);
    flush_now(whole, Barrier::band_flushed);
    hit(Point::matrix_flushed);
    moved_ += 2 * bytes;
    x += count;
  }
  next_stage_ = stage_ + 1;
}

void Journal::recover_band(InplaceMatrix& whole) {
  const BatchRecord b = h_.cur;
  const InplaceStage::Kind k = stages_[stage_].kind;
  const std::size_t es = id_.p.elem_size;
  const bands::Band band = bands::band_of(k, shape(), b.first, b.count);
  const std::uint64_t piece = std::max<std::uint64_t>(es, buffer_bytes() / es * es);
  std::vector<unsigned char> buf(std::size_t(std::min(piece, b.bytes)));
  if (data_valid(b)) {
    for_pieces(band, es, piece, [&](std::uint64_t r, std::uint64_t c, std::uint64_t h, std::uint64_t w, std::uint64_t off) {
      fmt::pread_full(fd_.get(), buf.data(), h * w * es, b.offset + off, path_);
      whole.write(r, c, h, w, buf.data(), w);
      hit(Point::b_tile);
    });
    // Durable before the next band's header replaces the one naming this band.
    barrier(Barrier::band_redone, [&] { whole.flush(); });
    hit(Point::matrix_flushed);
    start_ = b.end();
    return;
  }
  ChunkedHash sum;
  for_pieces(band, es, piece, [&](std::uint64_t r, std::uint64_t c, std::uint64_t h, std::uint64_t w, std::uint64_t) {
    whole.read(r, c, h, w, buf.data(), w);
    sum.update(buf.data(), std::size_t(h * w * es));
  });
  const std::uint64_t d = sum.digest();
  if (d == b.a_sum) {
    start_ = b.first;  // never written: the band starts over
    return;
  }
  if (d == b.data_sum) {
    // Written, but maybe only into the page cache (a process killed before
    // its flush): durable before the next band's header replaces this one.
    barrier(Barrier::band_redone, [&] { whole.flush(); });
    hit(Point::matrix_flushed);
    start_ = b.end();
    return;
  }
  throw Error(ErrorKind::input, path_ + " is damaged: its copy of " + band_text(k, b) + " fails its checksum, and those " +
                                    (k == InplaceStage::row_shuffle ? "rows" : "columns") + " of " + matrix_ +
                                    " are partly rewritten, so it cannot be finished from it; restore it from a copy");
}

}  // namespace gt::journal_impl
