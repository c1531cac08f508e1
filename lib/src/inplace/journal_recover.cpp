// Recovery of an interrupted in-place run (a resumed run): read the journal,
// check it belongs to this matrix, finish the interrupted batch. The cases
// are listed at the top of journal.cpp.
#include <sys/stat.h>

#include <algorithm>

#include "gtranspose/cpu_transpose.hpp"
#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

void Journal::resume(InplaceMatrix& m) {
  int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    throw Error(ErrorKind::usage, "nothing to resume: " + matrix_ + " has no journal (" + path_ +
                                      "); run without {resume}");
  if (fd < 0) throw_errno(ErrorKind::input, "cannot open the journal " + path_);
  fd_ = fmt::Fd(fd);

  std::optional<Header> best;
  for (std::uint64_t slot = 0; slot < 2; ++slot) {
    Header h{};
    if (pread_exact(fd_.get(), &h, sizeof h, slot * kSlotBytes, path_) && valid(h) && (h.seq & 1) == slot &&
        (!best || h.seq > best->seq))
      best = h;
  }
  if (!best) {
    struct stat st {};
    if (::fstat(fd_.get(), &st) == 0 && std::uint64_t(st.st_size) <= kDataOffset)
      throw Error(ErrorKind::input, path_ + " holds no complete header: the run that made it stopped before it wrote to " +
                                        matrix_ + ", which is unchanged; remove " + path_ + " and run again without {resume}");
    throw Error(ErrorKind::input, path_ + " is damaged (neither copy of its header is valid), so " + matrix_ +
                                      " cannot be finished from it: restore the matrix from a copy");
  }
  const Header& h = *best;
  const std::string why = mismatch(h, id_);
  if (!why.empty())
    throw Error(ErrorKind::input, path_ + " was written for " + why + ": it cannot finish " + matrix_ +
                                      " (left untouched); put back the file it belongs to and rerun with {resume}");
  const Phase phase = Phase(h.phase);
  const bool consistent =
      h.block >= 1 && h.block <= h.n && h.pairs == PairGrid::with_block(h.n, h.block).count() &&
      h.done <= h.pairs && (phase == Phase::idle || phase == Phase::saved || phase == Phase::a_written) &&
      (phase == Phase::idle || (h.batch_count >= 1 && h.batch_first == h.done && h.batch_count <= h.pairs - h.done));
  if (!consistent)
    throw Error(ErrorKind::input, path_ + " is damaged (its header does not describe a plan for " + matrix_ +
                                      "): restore the matrix from a copy");
  h_ = h;
  resumed_ = true;
  plan_.emplace(PairGrid::with_block(h.n, h.block));
  recover(m);
  plan_.reset();  // begin() installs the engine's plan
}

void Journal::recover(InplaceMatrix& m) {
  const Phase phase = Phase(h_.phase);
  std::uint64_t next = h_.done;
  if (phase != Phase::idle) {
    const std::uint64_t end = h_.batch_first + h_.batch_count;
    const bool data_ok = data_valid();
    if (!data_ok) {
      next = phase == Phase::saved ? h_.batch_first : end;
    } else {
      if (phase == Phase::saved) {
        redo_tiles_a(m);
        m.flush();
        hit(Point::a_flushed);
        Header h = h_;
        h.phase = std::uint32_t(Phase::a_written);
        put_header(h);
        hit(Point::a_marked);
        sync_journal();
        hit(Point::a_marked_synced);
      }
      rewrite_tiles_b(m);
      m.flush();
      hit(Point::recovered);
      next = end;
    }
    Header h = h_;
    h.phase = std::uint32_t(Phase::idle);
    h.done = next;
    h.batch_first = h.batch_count = h.batch_bytes = h.data_sum = 0;
    put_header(h);
    sync_journal();
    hit(Point::idle_synced);
  }
  next_ = start_ = next;
}

std::uint64_t Journal::buffer_bytes() const {
  const std::uint64_t total = host_mem_ ? std::max<std::uint64_t>(host_mem_ / 4, 1u << 16) : kDefaultRecoveryBytes;
  return total / 2;
}

std::uint64_t Journal::strip_rows(std::uint64_t w) const {
  return std::max<std::uint64_t>(1, buffer_bytes() / (w * id_.elem_size));
}

bool Journal::data_valid() {
  std::uint64_t expect = 0;
  for (std::uint64_t k = h_.batch_first; k < h_.batch_first + h_.batch_count; ++k)
    expect += plan_->pair(k).b.elems() * id_.elem_size;
  if (expect != h_.batch_bytes)
    throw Error(ErrorKind::input, path_ + " is damaged (its batch size does not match its plan): restore " + matrix_ +
                                      " from a copy");
  std::vector<unsigned char> buf(std::size_t(std::min(expect, buffer_bytes())));
  StreamHash sum;
  for (std::uint64_t off = 0; off < expect; off += buf.size()) {
    const std::uint64_t n = std::min<std::uint64_t>(buf.size(), expect - off);
    if (!pread_exact(fd_.get(), buf.data(), n, kDataOffset + off, path_)) return false;
    sum.update(buf.data(), std::size_t(n));
  }
  return sum.digest() == h_.data_sum;
}

void Journal::redo_tiles_a(InplaceMatrix& m) {
  const std::size_t es = id_.elem_size;
  std::vector<unsigned char> in, out;
  for (std::uint64_t k = h_.batch_first; k < h_.batch_first + h_.batch_count; ++k) {
    const TilePair p = plan_->pair(k);
    if (p.diagonal()) continue;
    const Tile& a = p.a;
    const Tile& b = p.b;
    const std::uint64_t rows = std::min(b.h, strip_rows(b.w));
    in.resize(std::size_t(rows * b.w * es));
    out.resize(in.size());
    for (std::uint64_t r = 0; r < b.h; r += rows) {
      const std::uint64_t h = std::min(rows, b.h - r);
      m.read(b.r0 + r, b.c0, h, b.w, in.data(), b.w);
      // One thread: recovery moves one batch, and a pool is not worth starting for it.
      cpu_transpose(in.data(), h, b.w, b.w, out.data(), h, es, 1);
      m.write(a.r0, a.c0 + r, b.w, h, out.data(), h);
    }
    hit(Point::a_tile);
  }
}

void Journal::rewrite_tiles_b(InplaceMatrix& m) {
  const std::size_t es = id_.elem_size;
  std::vector<unsigned char> buf;
  std::uint64_t off = kDataOffset;
  for (std::uint64_t k = h_.batch_first; k < h_.batch_first + h_.batch_count; ++k) {
    const Tile b = plan_->pair(k).b;
    const std::uint64_t rows = std::min(b.h, strip_rows(b.w));
    buf.resize(std::size_t(rows * b.w * es));
    for (std::uint64_t r = 0; r < b.h; r += rows) {
      const std::uint64_t h = std::min(rows, b.h - r);
      fmt::pread_full(fd_.get(), buf.data(), h * b.w * es, off, path_);
      m.write(b.r0 + r, b.c0, h, b.w, buf.data(), b.w);
      off += h * b.w * es;
    }
    hit(Point::b_tile);
  }
}

}  // namespace gt::journal_impl
