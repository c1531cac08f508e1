// A square in place in bands of whole rows (plan.hpp, SquareBandPlan), the
// route of a fresh square run on a file where the budget holds a band.
//
// Band k of the output (rows [kt, kt + h)) is column band k of the input.
// Per band k, in order:
//   1. read band k; build its new content from block (j, k) of the input,
//      transposed, for every band j: from the journal (j < k: saved when band
//      j was rewritten), from band k itself (the diagonal block), from the
//      matrix (j > k: bands not yet rewritten); checksum band k as it was
//      (a_sum) and as it becomes (out_sum);
//   2. band k's blocks (k, i), i >= k (the diagonal block, and those that
//      bands i > k need), each to a slot of the journal with a trailer that
//      names it and holds its checksum; then a header (kBand: band k, the
//      blocks' checksum, a_sum, out_sum; `done` = k); one sync;
//   3. band k's new content to the matrix, whole rows in file order; one
//      flush.
// A block takes the lowest free slot, and a slot is free again once the band
// it serves is durable (block (j, k) once band k is): the same bands give the
// same slots, so recovery finds every block by replaying the sequence. Band
// k's blocks go to slots freed by band k - 1's flush while the durable
// header may still name band k - 1: recovery then proves band k - 1 complete
// from the matrix (out_sum) without them.
//
// Recovery, the header naming band k (its blocks durable, its rows maybe
// partly written): the matrix's band k hashes to out_sum (complete: flushed,
// the run goes on after it) or to a_sum (untouched: it starts over), or is
// rebuilt as in step 1 from the journal's blocks, each verified by its
// trailer, and from the matrix's bands after it, then flushed. A block that
// fails its checksum where it is needed is refused with what is known. Two
// syncs a band; the power-loss test removes each (band_synced, band_flushed,
// band_redone) and finds a loss.
#include <algorithm>
#include <cstring>
#include <exception>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/cpu/thread_pool.hpp"
#include "gtranspose/cpu_transpose.hpp"
#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

namespace {

constexpr char kTrailerMagic[8] = {'G', 'T', 'S', 'Q', 'B', 'L', 'O', 'K'};

// After a block's bytes in its slot.
struct Trailer {
  char magic[8];
  std::uint64_t band, block, bytes, data_sum;
  std::uint64_t reserved[2];
  std::uint64_t sum;  // over the bytes above
};
static_assert(sizeof(Trailer) == kSquareTrailerBytes, "plan.hpp's trailer size");

std::uint64_t trailer_sum(const Trailer& t) { return journal_detail::hash_bytes(&t, offsetof(Trailer, sum)); }

// The journal's slot of block (j, i), j <= i, of n bands: band k takes the
// lowest free slots for its blocks (k, k..n-1) once band k - 1's blocks
// (0..k-1, k-1) are freed.
class Slots {
 public:
  explicit Slots(std::uint64_t n) : n_(n), of_(std::size_t(n)) {}
  // Band k's turn (bands in order from 0).
  void take(std::uint64_t k) {
    for (std::uint64_t j = 0; k > 0 && j < k; ++j) free_.insert(of_[j][k - 1 - j]);
    for (std::uint64_t i = k; i < n_; ++i) {
      std::uint64_t s = next_;
      if (!free_.empty()) {
        s = *free_.begin();
        free_.erase(free_.begin());
      } else {
        ++next_;
      }
      of_[k].push_back(s);
    }
  }
  std::uint64_t of(std::uint64_t j, std::uint64_t i) const { return of_[j][i - j]; }

 private:
  std::uint64_t n_, next_ = 0;
  std::vector<std::vector<std::uint64_t>> of_;
  std::set<std::uint64_t> free_;
};

// fn(lo, hi) over [0, count) on up to `threads` threads of its own (not the
// shared pool, which the other side's copies and checksums use meanwhile).
template <class F>
void on_threads(std::uint64_t count, int threads, F&& fn) {
  const std::uint64_t n = std::min<std::uint64_t>(count, std::uint64_t(std::max(1, threads)));
  if (n <= 1) {
    if (count) fn(std::uint64_t(0), count);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  for (std::uint64_t i = 0; i < n; ++i)
    pool.emplace_back([&, i] {
      try {
        fn(count * i / n, count * (i + 1) / n);
      } catch (...) {
        errors[std::size_t(i)] = std::current_exception();
      }
    });
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// Threads that read a band and its blocks where the matrix takes reads from
// several at once: memory copies out of the page cache, which one thread
// does at a quarter of what the memory gives (run 189: 4.0 s of band reads
// for 16 GiB on /dev/shm, one thread).
constexpr int kReadThreads = 8;

}  // namespace

InplaceStages::SquareRoute Journal::square_route() const {
  if (shape_.kind == InplaceShape::general) return SquareRoute::pairs;  // no square blocks
  if (resumed_) return h_.p.version == kSquareVersion ? SquareRoute::bands : SquareRoute::pairs;
  return SquareRoute::either;
}

bool Journal::square_consistent(const Header& h) const {
  const std::uint64_t N = shape_.side, t = h.p.block;
  if (shape_.kind == InplaceShape::general || h.stage >= stages_.size() ||
      stages_[h.stage].kind != InplaceStage::block || t == 0 || t > N || h.p.pairs != (N + t - 1) / t ||
      h.done > h.p.pairs || (h.p.phase & ~kBand) != 0)
    return false;
  if (!(h.p.phase & kBand)) return h.done == 0;  // create()'s header
  const std::uint64_t k = h.cur.first, rows = std::min(t, N - k * t);
  return k == h.done && k < h.p.pairs && h.cur.count == 1 && h.saved.offset >= kDataOffset &&
         h.cur.offset >= h.saved.offset && h.saved.bytes == rows * N * h.p.elem_size;
}

void Journal::square_bands(InplaceMatrix& whole, const SquareBandPlan& plan) {
  // The square: the matrix, or a rectangle's block stage (a view of it).
  const std::uint64_t N = whole.info().shape.rows;
  const std::size_t es = id_.p.elem_size;
  const std::uint64_t t = plan.rows, n = plan.bands;
  if (N != whole.info().shape.cols || N != shape_.side || stages_[stage_].kind != InplaceStage::block ||
      square_route() == SquareRoute::pairs || t == 0 || n != (N + t - 1) / t || (resuming() && h_.p.block != t))
    throw Error(ErrorKind::internal, "journal: square bands of " + std::to_string(t) + " rows do not fit this run");
  square_banded_ = true;
  const int threads = plan.threads;
  const std::uint64_t band_bytes = t * N * es;
  // Two sets of a band as read and as it becomes (band k's, while the next
  // band is built in the other), and a block buffer for each side.
  cpu::HostBuffer was_buf[2], now_buf[2], blk_buf[2];
  for (int s = 0; s < 2; ++s) {
    was_buf[s] = cpu::HostBuffer(std::size_t(band_bytes));
    now_buf[s] = cpu::HostBuffer(std::size_t(band_bytes));
    blk_buf[s] = cpu::HostBuffer(std::size_t(plan.slot_bytes));
  }
  unsigned char* const save_blk = blk_buf[0].data();  // the journal side's
  unsigned char* const build_blk = blk_buf[1].data();
  const auto rows_of = [&](std::uint64_t k) { return std::min(t, N - k * t); };
  // Where the stage's slots begin (every header of it records it): a band
  // in flight's, else past what the durable header still needs (a
  // rectangle's permutation saved before this block: its group is redone
  // from there until this stage's first header replaces that one).
  std::uint64_t base = kDataOffset;
  if (resuming() && (h_.p.phase & kBand)) {
    base = h_.saved.offset;
  } else {
    if (h_.p.phase & kPermute) base = std::max(base, h_.saved.offset + h_.saved.bytes);
    if (h_.p.phase & kHasPrev) base = std::max(base, h_.prev.offset + h_.prev.bytes);
    if (h_.p.phase & kHasCur) base = std::max(base, h_.cur.offset + h_.cur.bytes);
    base = (base + 4095) / 4096 * 4096;
  }
  const auto slot_at = [&](std::uint64_t s) { return base + s * plan.slot_bytes; };
  // Matrix writes in pieces of about this many bytes, each one's write-back
  // started at once, so the flush waits for the tail only.
  constexpr std::uint64_t kPiece = std::uint64_t(64) << 20;

  Slots slots(n);
  // Block (j, i) from its slot into blk; with `verify`, false unless its
  // trailer names it and its checksum holds.
  const int readers = whole.concurrent_io() ? std::min(kReadThreads, threads) : 1;
  const auto read_rows = [&](std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, unsigned char* dst) {
    on_threads(h, readers, [&](std::uint64_t lo, std::uint64_t hi) {
      whole.read(r0 + lo, c0, hi - lo, w, dst + lo * w * es, w);
    });
  };
  const auto read_block = [&](std::uint64_t j, std::uint64_t i, unsigned char* blk, bool verify) {
    const std::uint64_t bytes = rows_of(j) * rows_of(i) * es, off = slot_at(slots.of(j, i));
    if (!verify) {
      on_threads(bytes / 4096 + 1, kReadThreads, [&](std::uint64_t lo, std::uint64_t hi) {
        const std::uint64_t a = std::min(bytes, lo * 4096), b = std::min(bytes, hi * 4096);
        if (b > a) fmt::pread_full(fd_.get(), blk + a, b - a, off + a, path_);
      });
      return true;
    }
    if (!pread_exact(fd_.get(), blk, bytes + sizeof(Trailer), off, path_)) return false;
    Trailer tr;
    std::memcpy(&tr, blk + bytes, sizeof tr);
    return std::memcmp(tr.magic, kTrailerMagic, sizeof kTrailerMagic) == 0 && tr.sum == trailer_sum(tr) &&
           tr.band == j && tr.block == i && tr.bytes == bytes && tr.data_sum == chunked_digest(blk, bytes, threads);
  };
  // A band built: its checksums as it was and as it becomes, and where the
  // time went.
  struct Built {
    std::uint64_t a_sum = 0, out_sum = 0;
    double read_s = 0, permute_s = 0;
  };
  // Band k read into was and its new content built in now: block (j, k),
  // transposed, for every band j. prev_was: band k - 1 as it was (its block
  // (k - 1, k) is taken from there, its slot maybe still being written);
  // recover: band k partly rewritten and already in was, so its diagonal
  // block too comes from the journal (whose blocks the resume verified
  // before any write).
  const auto build = [&](std::uint64_t k, unsigned char* was, unsigned char* now, const unsigned char* prev_was,
                         bool recover) {
    Built b;
    const std::uint64_t h = rows_of(k), bytes = h * N * es;
    if (!recover) timed(b.read_s, [&] { read_rows(k * t, 0, h, N, was); });
    for (std::uint64_t j = 0; j < n; ++j) {
      const std::uint64_t hj = rows_of(j);
      const unsigned char* src = build_blk;
      std::uint64_t ld = h;
      if (j == k && !recover) {
        src = was + k * t * es;  // the diagonal block, in the band as read
        ld = N;
      } else if (j + 1 == k && prev_was) {
        src = prev_was + k * t * es;
        ld = N;
      } else if (j <= k) {
        timed(b.read_s, [&] { read_block(j, k, build_blk, false); });
      } else {
        timed(b.read_s, [&] { read_rows(j * t, k * t, hj, h, build_blk); });
      }
      timed(b.permute_s, [&] { cpu_transpose(src, hj, h, ld, now + j * t * es, N, es, threads); });
    }
    timed(b.permute_s, [&] {
      b.a_sum = chunked_digest(was, bytes, threads);
      b.out_sum = chunked_digest(now, bytes, threads);
    });
    return b;
  };
  const auto account = [&](const Built& b) {
    band_read_secs_ += b.read_s;
    band_permute_secs_ += b.permute_s;
  };
  const auto write_band = [&](std::uint64_t k, const unsigned char* now) {
    const std::uint64_t h = rows_of(k), per = std::max<std::uint64_t>(1, kPiece / (N * es));
    timed(matrix_secs_, [&] {
      for (std::uint64_t r = 0; r < h; r += per) {
        const std::uint64_t m = std::min(per, h - r);
        whole.write(k * t + r, 0, m, N, now + r * N * es, N);
        whole.start_writeback(k * t + r, m);
      }
    });
    hit(Point::b_tile);
  };

  std::uint64_t k0 = resuming() ? h_.done : 0;
  for (std::uint64_t k = 0; k < k0; ++k) slots.take(k);
  if (resuming()) {
    // Every decision before any write. The interrupted run saved the blocks
    // of bands below `saved_by_it`; those of columns from `needed` on are
    // still to be read, and are verified here, so a damaged one is refused
    // before the matrix changes (later reads of the journal are of blocks
    // this process wrote).
    std::uint64_t saved_by_it = k0, needed = k0;
    bool rebuild = false, complete = false;
    const std::uint64_t k = h_.cur.first, h = (h_.p.phase & kBand) ? rows_of(k) : 0;
    unsigned char* was = was_buf[0].data();
    if (h_.p.phase & kBand) {
      timed(band_read_secs_, [&] { whole.read(k * t, 0, h, N, was, N); });
      const std::uint64_t d = chunked_digest(was, h * N * es, threads);
      if (d != h_.cur.a_sum) {  // else untouched: it starts over, its blocks to the same slots again
        slots.take(k);
        saved_by_it = k + 1;
        complete = d == h_.saved.data_sum;
        rebuild = !complete;
        needed = complete ? k + 1 : k;
      }
    }
    const std::string rewritten = rebuild ? "rows " + std::to_string(k * t) + "-" + std::to_string(k * t + h - 1) +
                                                " of " + matrix_ + " are partly rewritten"
                                          : "rows 0-" + std::to_string(std::min(N, saved_by_it * t) - 1) + " of " +
                                                matrix_ + " are rewritten (the journal holds what they were)";
    const std::uint64_t complete_below = (rebuild ? k : needed) * t;
    const auto damaged = [&](const std::string& what) {
      damaged_ = true;
      return Error(ErrorKind::input, path_ + " is damaged: " + what + ", and " + rewritten +
                                         ", so it cannot be finished from it; restore it from a copy (rows below " +
                                         std::to_string(std::min(N, complete_below)) + " are complete)");
    };
    for (std::uint64_t j = 0; j < saved_by_it; ++j)
      for (std::uint64_t i = std::max(j, needed); i < n; ++i) {
        bool ok = true;
        timed(band_read_secs_, [&] { ok = read_block(j, i, build_blk, true); });
        if (!ok)
          throw damaged("its copy of rows " + std::to_string(j * t) + "-" + std::to_string(j * t + rows_of(j) - 1) +
                        ", columns " + std::to_string(i * t) + "-" + std::to_string(i * t + rows_of(i) - 1) +
                        " fails its checksum");
      }
    if (rebuild) {
      account(build(k, was, now_buf[0].data(), nullptr, true));
      write_band(k, now_buf[0].data());
    }
    if (rebuild || complete) {
      // Complete, maybe only in the page cache (a process killed before its
      // flush): durable before the next band's header replaces this one.
      barrier(Barrier::band_redone, [&] { timed(flush_secs_, [&] { whole.flush(); }); });
      hit(Point::matrix_flushed);
      k0 = k + 1;
    }
  }

  // The next band is built on another thread while this one's blocks go to
  // the journal and its rows to the matrix: it reads bands not yet rewritten
  // and blocks of the journal no band in flight writes (band k's go to slots
  // band k - 1 freed), so a matrix that takes reads and writes at once
  // (concurrent_io) keeps the disk busy while the CPU builds.
  const bool ahead = whole.concurrent_io();
  Built cur;
  if (k0 < n) cur = build(k0, was_buf[k0 % 2].data(), now_buf[k0 % 2].data(), nullptr, false);
  for (std::uint64_t k = k0; k < n; ++k) {
    account(cur);
    const int set = int(k % 2);
    unsigned char* was = was_buf[set].data();
    const unsigned char* now = now_buf[set].data();
    const std::uint64_t h = rows_of(k), bytes = h * N * es;
    slots.take(k);
    Built next;
    std::exception_ptr next_error;
    std::thread builder;
    struct Joiner {
      std::thread& th;
      ~Joiner() {
        if (th.joinable()) th.join();
      }
    } joiner{builder};
    const auto build_next = [&] {
      try {
        next = build(k + 1, was_buf[1 - set].data(), now_buf[1 - set].data(), was, false);
      } catch (...) {
        next_error = std::current_exception();
      }
    };
    if (ahead && k + 1 < n) builder = std::thread(build_next);
    // The journal starts here, after its buffers and its first band's
    // build: a failure before leaves no journal behind.
    // A rectangle's journal may exist from its stages before (as version
    // 2): its headers say version 4 from the first band on.
    id_.p.version = kSquareVersion;
    if (!created_) create(t, n);
    // Band k's blocks (k, i), i >= k, each with its trailer.
    BatchRecord rec{}, out{};
    std::vector<std::uint64_t> sums;
    timed([&] {
      for (std::uint64_t i = k; i < n; ++i) {
        const std::uint64_t w = rows_of(i), b = h * w * es, off = slot_at(slots.of(k, i));
        cpu::parallel_bands(h, threads, [&](std::uint64_t lo, std::uint64_t hi) {
          for (std::uint64_t r = lo; r < hi; ++r) std::memcpy(save_blk + r * w * es, was + (r * N + i * t) * es, w * es);
        });
        Trailer tr{};
        std::memcpy(tr.magic, kTrailerMagic, sizeof kTrailerMagic);
        tr.band = k;
        tr.block = i;
        tr.bytes = b;
        tr.data_sum = chunked_digest(save_blk, b, threads);
        tr.sum = trailer_sum(tr);
        std::memcpy(save_blk + b, &tr, sizeof tr);
        reserve(off + b + sizeof tr);
        fmt::pwrite_full(fd_.get(), save_blk, b + sizeof tr, off, path_);
        fmt::start_writeback(fd_.get(), off, b + sizeof tr, path_);
        sums.push_back(tr.data_sum);
        bytes_ += b + sizeof tr;
        if (i == k) rec.offset = off;
        rec.bytes += b + sizeof tr;
      }
    });
    hit(Point::data_written);
    rec.first = k;
    rec.count = 1;
    rec.data_sum = sum_of_sums(sums);
    rec.a_sum = cur.a_sum;
    out.first = k;
    out.count = 1;
    out.offset = base;  // the slots' start, not data of this record
    out.bytes = bytes;
    out.data_sum = cur.out_sum;
    Header hd = h_;
    hd.p.version = kSquareVersion;
    hd.p.block = t;
    hd.p.pairs = n;
    hd.p.phase = kBand;
    hd.stage = stage_;
    hd.done = k;
    hd.prev = {};
    hd.cur = rec;
    hd.saved = out;
    put_header(hd);
    hit(Point::saved_written);
    sync_journal(Barrier::band_synced);
    hit(Point::saved_synced);
    write_band(k, now);
    flush_now(whole, Barrier::band_flushed);
    hit(Point::matrix_flushed);
    moved_ += 2 * bytes;
    if (k + 1 < n) {
      if (builder.joinable()) timed(wait_secs_, [&] { builder.join(); });
      else build_next();
      if (next_error) std::rethrow_exception(next_error);
      cur = next;
    }
  }
  hit(Point::finish_flushed);
  next_stage_ = stage_ + 1;
  // A square's one stage ends the run; a rectangle's next stage goes on
  // from the header just written (its block's bands all durable).
  if (stages_.size() == 1) remove();
}

}  // namespace gt::journal_impl
