// Recovery of an interrupted in-place run (a resumed run): read the journal,
// check it belongs to this matrix, finish the interrupted batches.
//
// The latest valid header describes at most two batches (journal.cpp):
//   prev  its tiles a are durable; its tiles b may be partly written. Data
//         valid: write them again from the journal. Data invalid (damaged,
//         since no batch's data is overwritten while a durable header needs
//         it): complete if the matrix's tiles b already hold what the data
//         held (their checksum, read in the data's order); otherwise refused.
//   cur   its data is durable, its tiles a may be partly written, its tiles
//         b are original (they are written only after a header moves the
//         batch to prev). Data valid: redo tiles a from tiles b, make them
//         durable and say so (the batch becomes prev), then write tiles b.
//         Data invalid: if tiles a still hold what they held before the
//         batch (their checksum, taken as the engine read them), the batch
//         starts over; otherwise refused.
// A general shape's band stage (journal_bands.cpp, recover_band) names at
// most one band, whose new content the journal holds: valid, it is written
// again and flushed; invalid, the matrix decides (still the old content: the
// band starts over; already the new: flushed, and the run goes on after it;
// else refused).
// A refusal says which pairs (rows, columns) are partly rewritten and that
// the matrix cannot be finished from this journal; the journal is kept.
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "inplace/bands.hpp"
#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

void Journal::no_valid_header(std::uint64_t size) const {
  // Its first header is durable before it has a name, so a journal without
  // one was damaged since: nothing says how far the run got, and nothing
  // proves the matrix unchanged.
  throw Error(ErrorKind::input, path_ + " holds no valid header (" + std::to_string(size) + " bytes), so it cannot say how "
                                "far the interrupted run got: " + matrix_ + " may be unchanged or partly transposed and "
                                "cannot be finished from it; restore " + matrix_ + " from a copy, then remove " + path_);
}

void Journal::check_consistent(const Header& h) const {
  if (h.p.version == kSquareVersion && h.stage < stages_.size() && stages_[h.stage].kind == InplaceStage::block) {
    if (!square_consistent(h))
      throw Error(ErrorKind::input, path_ + " is damaged (its header does not describe a plan for " + matrix_ +
                                        "): " + matrix_ + " cannot be finished from it; restore it from a copy");
    return;
  }
  const std::uint64_t side = shape_.side;
  const bool pairs_phase = h.p.phase & (kHasPrev | kHasCur);
  const bool band_phase = h.p.phase & kBand;
  bool ok = h.stage < stages_.size() && (h.p.phase & ~(kHasPrev | kHasCur | kPermute | kBand)) == 0 &&
            int(pairs_phase) + int(bool(h.p.phase & kPermute)) + int(band_phase) <= 1;
  // (A version 4 header after a block in bands keeps that block's bands there.)
  if (ok && h.p.block && h.p.version != kSquareVersion)
    ok = h.p.block <= side && h.p.pairs == PairGrid::with_block(side, h.p.block).count() && h.done <= h.p.pairs;
  const auto batch_ok = [&](const BatchRecord& b) {
    return h.p.block && b.count >= 1 && b.first <= h.p.pairs && b.count <= h.p.pairs - b.first &&
           b.offset >= kDataOffset && b.offset + b.bytes >= b.offset;
  };
  if (ok && (h.p.phase & kHasPrev)) ok = batch_ok(h.prev) && h.done == h.prev.first;
  if (ok && (h.p.phase & kHasCur)) {
    ok = batch_ok(h.cur) && h.cur.first == ((h.p.phase & kHasPrev) ? h.prev.end() : h.done);
    if (ok && (h.p.phase & kHasPrev))
      ok = h.cur.offset >= h.prev.offset + h.prev.bytes || h.prev.offset >= h.cur.offset + h.cur.bytes;
  }
  if (ok && (h.p.phase & kPermute))
    ok = stages_[h.stage].kind == InplaceStage::permute && h.chains >= 1 && h.chain_length >= 1 &&
         h.saved.offset >= kDataOffset && h.saved.count >= 1 && h.saved.bytes == h.saved.count * side * h.p.elem_size;
  if (ok && is_band_stage(stages_[h.stage].kind)) {
    // A band stage: rows or columns below `done` complete; a band in flight
    // starts there and holds count whole rows or columns.
    const InplaceStage::Kind k = stages_[h.stage].kind;
    const Shape s{h.p.n, h.cols};
    const std::uint64_t n = bands::extent(k, s);
    // Its headers are create()'s (phase 0, nothing done) and band_step()'s.
    ok = h.p.version >= 3 && h.done <= n && (h.p.phase & ~kBand) == 0 && (band_phase || h.done == 0);
    if (ok && band_phase)
      ok = h.cur.first == h.done && h.cur.count >= 1 && h.cur.count <= n - h.cur.first && h.cur.offset >= kDataOffset &&
           h.cur.offset + h.cur.bytes >= h.cur.offset &&
           h.cur.bytes == bands::band_of(k, s, h.cur.first, h.cur.count).elems() * h.p.elem_size;
  } else if (ok) {
    ok = !band_phase;
  }
  if (!ok)
    throw Error(ErrorKind::input, path_ + " is damaged (its header does not describe a plan for " + matrix_ +
                                      "): " + matrix_ + " cannot be finished from it; restore it from a copy");
}

void Journal::resume(InplaceMatrix& m) {
  std::string found = find_journal(matrix_);
  // A journal under the file's name that names another file: open it anyway,
  // so that the refusal says whose it is.
  if (found.empty() && fmt::path_exists(path_)) found = path_;
  if (found.empty())
    throw Error(ErrorKind::usage, "nothing to resume: " + matrix_ + " has no journal (" + path_ +
                                      "); run without {resume}");
  path_ = found;
  int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw_errno(ErrorKind::input, "cannot open the journal " + path_);
  fd_ = fmt::Fd(fd);

  std::optional<Header> best;
  std::uint32_t other_version = 0;
  for (std::uint64_t slot = 0; slot < 2; ++slot) {
    unsigned char buf[kSlotBytes];
    const std::size_t got = read_slot(fd_.get(), slot, buf, path_);
    const std::optional<HeaderPrefix> pre = valid_prefix(buf, got);
    if (!pre) continue;
    if (pre->version < kOldestVersion || pre->version > kVersion) {
      other_version = pre->version;
      continue;
    }
    Header h{};
    std::memcpy(&h, buf, sizeof h);
    if (valid(h) && (h.p.seq & 1) == slot && (!best || h.p.seq > best->p.seq)) best = h;
  }
  if (!best && other_version)
    throw Error(ErrorKind::input, path_ + " was written by another version of gtranspose (journal version " +
                                      std::to_string(other_version) + "; this one reads versions " +
                                      std::to_string(kOldestVersion) + " to " + std::to_string(kVersion) + "): finish " + matrix_ +
                                      " with the version that began it, with {in_place} {resume}");
  if (!best) no_valid_header(fmt::file_size(fd_.get(), path_));
  const Header& h = *best;
  // The run's shape is the journal's: at its end stage a .npy header may
  // already say the transpose's.
  const bool at_end = [&] {
    try {
      const auto st = inplace_stages(plan_inplace_shape({h.p.n, h.cols}, matrix_));
      return h.stage < st.size() && st[h.stage].kind == InplaceStage::end;
    } catch (const Error&) {
      return false;
    }
  }();
  Header now = id_;
  if (at_end && now.p.n == h.cols && now.cols == h.p.n) std::swap(now.p.n, now.cols);
  const std::string why = mismatch(h, now);
  if (!why.empty())
    throw Error(ErrorKind::input, path_ + " was written for " + why + ": it cannot finish " + matrix_ +
                                      " (left untouched); put back the file it belongs to and rerun with {resume}");
  id_ = now;
  shape_ = plan_inplace_shape({h.p.n, h.cols}, matrix_);
  stages_ = inplace_stages(shape_);
  check_consistent(h);
  h_ = h;
  resumed_ = created_ = true;
  stage_ = resumed_stage_ = next_stage_ = h.stage;
  marked_ = !read_mark(matrix_).empty();
  const InplaceStage& st = stages_[h.stage];
  if (h.p.version == kSquareVersion && st.kind == InplaceStage::block) {
    // A square (block) in bands: its band in flight is finished by
    // square_bands(), with the run's band buffers.
    square_banded_ = true;
    start_ = h.done;
    return;
  }
  if (st.kind == InplaceStage::block && h.p.block) {
    plan_.emplace(PairGrid::with_block(shape_.side, h.p.block));
    for (const BatchRecord* b : {&h.prev, &h.cur}) {
      std::uint64_t want = 0;
      for (std::uint64_t k = b->first; k < b->end(); ++k) want += journal_bytes_of(plan_->pair(k), h.p.elem_size);
      const bool used = b == &h.prev ? (h.p.phase & kHasPrev) : (h.p.phase & kHasCur);
      if (used && want != b->bytes)
        throw Error(ErrorKind::input, path_ + " is damaged (its batch size does not match its plan): restore " +
                                          matrix_ + " from a copy");
    }
    // A square's block is the matrix; a rectangle's, a view of it.
    if (stages_.size() == 1) {
      recover(m);
    } else {
      const auto view = block_view(m, shape_, st.index);
      recover(*view);
    }
    if (start_ == h.p.pairs && stages_.size() > 1) next_stage_ = h.stage + 1;
  } else if (st.kind == InplaceStage::permute && (h.p.phase & kPermute)) {
    recover_permute(m);
  } else if (is_band_stage(st.kind)) {
    if (h.p.phase & kBand) recover_band(m);
    else start_ = h.done;
  } else if (st.kind == InplaceStage::block && stages_.size() > 1) {
    start_ = 0;  // a stage begun with nothing of it written yet
  }
  plan_.reset();  // begin() installs the engine's plan
}

std::string Journal::pairs_text(const BatchRecord& b) const {
  return b.count == 1 ? "tile pair " + std::to_string(b.first)
                      : "tile pairs " + std::to_string(b.first) + "-" + std::to_string(b.end() - 1);
}

void Journal::recover(InplaceMatrix& m) {
  const std::size_t es = id_.p.elem_size;
  Scratch s;
  s.bytes = buffer_bytes();
  const bool has_prev = h_.p.phase & kHasPrev, has_cur = h_.p.phase & kHasCur;
  const std::string damaged = path_ + " is damaged: its copy of ";
  const std::string lost = " cannot be finished from it; restore it from a copy (pairs below " +
                           std::to_string(h_.done) + " are complete)";
  std::uint64_t next = h_.done;

  // Every decision before any write: a refusal leaves the matrix as it was
  // (a batch's tiles b and tiles a are written in file order, so a crash
  // can leave some of either; the checks read only the tiles they decide on).
  const bool prev_valid = has_prev && data_valid(h_.prev);
  if (has_prev && !prev_valid) {
    const BatchRecord& b = h_.prev;
    ChunkedHash sum;
    for (std::uint64_t k = b.first; k < b.end(); ++k) hash_b_part(m, plan_->pair(k), es, sum, s);
    if (sum.digest() != b.data_sum)
      throw Error(ErrorKind::input, damaged + pairs_text(b) + " fails its checksum, and those pairs of " + matrix_ +
                                        " hold new tiles a and partly written tiles b, so it" + lost);
  }
  const bool cur_valid = has_cur && data_valid(h_.cur);
  if (has_cur && !cur_valid) {
    const BatchRecord& b = h_.cur;
    std::vector<std::uint64_t> sums;
    for (std::uint64_t k = b.first; k < b.end(); ++k) sums.push_back(hash_tile_a(m, plan_->pair(k), es, s));
    if (sum_of_sums(sums) != b.a_sum)
      throw Error(ErrorKind::input, damaged + pairs_text(b) + " fails its checksum, and tiles a of those pairs of " +
                                        matrix_ + " are partly rewritten, so it" + lost);
  }

  if (has_prev) {
    const BatchRecord b = h_.prev;
    if (prev_valid) {
      std::uint64_t off = b.offset;
      for (std::uint64_t k = b.first; k < b.end(); ++k) {
        off += rewrite_b_part(m, plan_->pair(k), es, fd_.get(), path_, off, s);
        hit(Point::b_tile);
      }
    }  // else its tiles b already hold the data (checked above)
    next = b.end();
  }
  if (has_cur) {
    const BatchRecord b = h_.cur;  // a copy: put_header() below replaces h_
    if (cur_valid) {
      for (std::uint64_t k = b.first; k < b.end(); ++k) {
        redo_a_part(m, plan_->pair(k), es, s);
        hit(Point::a_tile);
      }
      // Tiles a durable, and the header says so, before any tile b changes:
      // until then, a crash redoes tiles a from tiles b again.
      barrier(Barrier::recovery_flushed, [&] { m.flush(); });
      hit(Point::matrix_flushed);
      Header h = h_;
      h.p.phase = kHasPrev;
      h.prev = b;
      h.cur = {};
      h.done = b.first;
      put_header(h);
      barrier(Barrier::recovery_synced, [&] { fmt::sync_file(fd_.get(), path_, true); });
      hit(Point::saved_synced);
      std::uint64_t off = b.offset;
      for (std::uint64_t k = b.first; k < b.end(); ++k) {
        off += rewrite_b_part(m, plan_->pair(k), es, fd_.get(), path_, off, s);
        hit(Point::b_tile);
      }
      next = b.end();
    } else {
      next = b.first;  // tiles a as they were (checked above): the batch starts over
    }
  }
  if (has_prev || has_cur) {
    // Also where nothing was rewritten: a batch accepted because the matrix
    // already held it may hold it only in the page cache (a process killed
    // before its flush), and the header below forgets the batch.
    barrier(Barrier::recovery_flushed, [&] { m.flush(); });
    hit(Point::recovered);
    Header h = h_;
    h.p.phase = 0;
    h.done = next;
    h.prev = h.cur = {};
    put_header(h);
    barrier(Barrier::recovery_synced, [&] { fmt::sync_file(fd_.get(), path_, true); });
    hit(Point::saved_synced);
  }
  next_ = start_ = next;
}

std::uint64_t Journal::buffer_bytes() const {
  const std::uint64_t total = host_mem_ ? std::max<std::uint64_t>(host_mem_ / 4, 1u << 16) : kDefaultRecoveryBytes;
  return total / 2;
}

bool Journal::data_valid(const BatchRecord& b) {
  std::vector<unsigned char> buf(std::size_t(std::min<std::uint64_t>(std::max<std::uint64_t>(b.bytes, 1), buffer_bytes())));
  ChunkedHash sum;
  for (std::uint64_t off = 0; off < b.bytes; off += buf.size()) {
    const std::uint64_t n = std::min<std::uint64_t>(buf.size(), b.bytes - off);
    if (!pread_exact(fd_.get(), buf.data(), n, b.offset + off, path_)) return false;
    sum.update(buf.data(), std::size_t(n));
  }
  return sum.digest() == b.data_sum;
}

}  // namespace gt::journal_impl
