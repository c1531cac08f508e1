// A rectangle's stages through the journal (journal.hpp): the segment
// permutation (permute.hpp says how its moves are cut into chains and
// groups) and the end.
//
// Per group: the first destination of every chain is saved in the journal
// (where no live data lies) with a header that describes the group (kPermute,
// step 0), one sync. Then per step t: the moves of step t (every chain's
// destination t from its destination t+1, or for a chain's last move from
// the saved copy of the next chain's first destination), one flush of the
// matrix, a header that says step t+1, one sync. A crash anywhere leaves a
// header whose step's moves can all be redone: their sources are
// overwritten only by the next step, which starts after that header is
// durable. Recovery verifies the saved segments; damaged ones are taken
// again from the matrix while step 0 has not begun (the chains' first
// destinations still hold them), and refused otherwise.
//
// The end: a .npy file's header gets the new shape (same length: the two
// numbers trade places), then the journal goes.
#include <algorithm>
#include <cstring>

#include "formats/npy.hpp"
#include "inplace/journal_internal.hpp"
#include "inplace/permute.hpp"

namespace gt::journal_impl {

namespace {

// The moves of one step, cut into pieces the buffer holds.
struct Move {
  std::uint64_t dest;
  std::uint64_t source;  // a segment of the matrix, or...
  bool saved;            // ...a saved segment (`source` is its slot)
};

}  // namespace

void Journal::permute(InplaceMatrix& whole, const PermutePlan& plan) {
  using permute::Group;
  using permute::GroupWalker;
  using permute::place_of;
  using permute::src_of;
  if (stages_[stage_].kind != InplaceStage::permute) throw Error(ErrorKind::internal, "journal: not a permutation stage");
  if (!created_) create(0, 0);  // a wide matrix and a grid start here
  const bool resumed = resuming() && (h_.p.phase & kPermute);
  const std::size_t es = id_.p.elem_size;
  const std::uint64_t side = shape_.side, cols = whole.info().shape.cols, seg = side * es;
  const std::uint64_t chains = resumed ? h_.chains : plan.chains, length = resumed ? h_.chain_length : plan.chain_length;
  const std::uint64_t per_piece = std::max<std::uint64_t>(1, plan.buffer_bytes / seg);
  const PermuteRegion rg = permute_region(shape_, stages_[stage_].index);
  const auto at = [&](std::uint64_t x) { return place_of(rg.offset + x, side, cols); };
  std::vector<unsigned char> buf;
  GroupWalker walker(rg.P, rg.Q, chains, length);
  Group gr;
  for (std::uint64_t g = 0; walker.next(gr); ++g) {
    if (resumed && g < h_.group) continue;
    const std::size_t n = gr.chains.size();
    std::vector<std::uint64_t> pos(n);
    for (std::size_t c = 0; c < n; ++c) pos[c] = gr.chains[c].first;
    std::uint64_t t0 = 0;
    if (resumed && g == h_.group && !resave_) {
      t0 = h_.step;
    } else {
      // Every chain's first destination into the journal, clear of what the
      // durable header still names.
      BatchRecord saved{};
      saved.first = g;
      saved.count = n;
      saved.bytes = n * seg;
      saved.offset = place(saved.bytes);
      reserve(saved.offset + saved.bytes);
      ChunkedHash sum;
      buf.resize(std::size_t(std::min(n, per_piece) * seg));
      timed([&] {
        for (std::size_t c0 = 0; c0 < n; c0 += std::size_t(per_piece)) {
          const std::size_t k = std::min<std::size_t>(n - c0, std::size_t(per_piece));
          for (std::size_t i = 0; i < k; ++i) {
            const permute::Place p = at(pos[c0 + i]);
            whole.read(p.row, p.col, 1, side, buf.data() + i * seg, side);
          }
          fmt::pwrite_full(fd_.get(), buf.data(), k * seg, saved.offset + c0 * seg, path_);
          sum.update(buf.data(), std::size_t(k * seg));
        }
      });
      saved.data_sum = sum.digest();
      Header h = h_;
      h.p.phase = kPermute;
      h.stage = stage_;
      h.group = g;
      h.step = 0;
      h.chains = chains;
      h.chain_length = length;
      h.saved = saved;
      h.prev = h.cur = {};
      put_header(h);
      sync_journal(Barrier::saved_synced);
      hit(Point::saved_synced);
      resave_ = false;
    }
    for (std::size_t c = 0; c < n; ++c)
      for (std::uint64_t t = 0; t < std::min(t0, gr.chains[c].len); ++t) pos[c] = src_of(pos[c], rg.P, rg.Q);

    for (std::uint64_t t = t0; t < gr.steps; ++t) {
      std::vector<Move> moves;
      for (std::size_t c = 0; c < n; ++c) {
        const permute::Chain& ch = gr.chains[c];
        if (t >= ch.len) continue;
        const bool last = t + 1 == ch.len;
        moves.push_back({pos[c], last ? ch.next : src_of(pos[c], rg.P, rg.Q), last});
      }
      // Reads in the order they lie, a buffer's worth at a time; then the writes.
      std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
        return a.saved != b.saved ? b.saved : a.source < b.source;
      });
      timed(matrix_secs_, [&] {
        for (std::size_t m0 = 0; m0 < moves.size(); m0 += std::size_t(per_piece)) {
          const std::size_t k = std::min<std::size_t>(moves.size() - m0, std::size_t(per_piece));
          buf.resize(std::size_t(k * seg));
          for (std::size_t i = 0; i < k; ++i) {
            const Move& mv = moves[m0 + i];
            if (mv.saved) {
              fmt::pread_full(fd_.get(), buf.data() + i * seg, seg, h_.saved.offset + mv.source * seg, path_);
            } else {
              const permute::Place p = at(mv.source);
              whole.read(p.row, p.col, 1, side, buf.data() + i * seg, side);
            }
          }
          for (std::size_t i = 0; i < k; ++i) {
            const permute::Place p = at(moves[m0 + i].dest);
            whole.write(p.row, p.col, 1, side, buf.data() + i * seg, side);
          }
          moved_ += 2 * k * seg;
        }
      });
      hit(Point::b_tile);
      flush_now(whole, Barrier::step_flushed);
      hit(Point::matrix_flushed);
      Header h = h_;
      h.step = t + 1;
      put_header(h);
      sync_journal(Barrier::step_synced);
      hit(Point::saved_synced);
      for (std::size_t c = 0; c < n; ++c)
        if (t < gr.chains[c].len) pos[c] = src_of(pos[c], rg.P, rg.Q);
    }
  }
  next_stage_ = stage_ + 1;
}

void Journal::recover_permute(InplaceMatrix& whole) {
  // The saved segments: needed by every chain's last move.
  const BatchRecord& b = h_.saved;
  if (data_valid(b)) return;
  if (h_.step == 0) {
    // Step 0 may have begun: the chains' first destinations prove whether
    // it did (they still hold what the journal saved from them).
    const PermuteRegion rg = permute_region(shape_, stages_[stage_].index);
    permute::GroupWalker walker(rg.P, rg.Q, h_.chains, h_.chain_length);
    permute::Group gr;
    for (std::uint64_t g = 0; g <= h_.group; ++g) walker.next(gr);
    const std::size_t es = id_.p.elem_size;
    const std::uint64_t side = shape_.side, cols = whole.info().shape.cols;
    std::vector<unsigned char> seg(std::size_t(side * es));
    ChunkedHash sum;
    for (const permute::Chain& c : gr.chains) {
      const permute::Place p = permute::place_of(rg.offset + c.first, side, cols);
      whole.read(p.row, p.col, 1, side, seg.data(), side);
      sum.update(seg.data(), seg.size());
    }
    if (gr.chains.size() == b.count && sum.digest() == b.data_sum) {
      resave_ = true;  // untouched: permute() saves them again
      return;
    }
  }
  throw Error(ErrorKind::input, path_ + " is damaged: the rows it saved for permutation group " + std::to_string(b.first) +
                                    " fail their checksum, and " + matrix_ + " has been partly permuted since, so it "
                                    "cannot be finished from it; restore it from a copy");
}

namespace {

// A .npy header's text with the numbers of its 2-D shape swapped: the same
// length, so the data does not move. Empty if it does not hold (a, b).
std::string swapped_shape(const std::string& text, std::uint64_t a, std::uint64_t b) {
  const std::size_t key = text.find("'shape'");
  const std::size_t open = text.find('(', key == std::string::npos ? 0 : key);
  const std::size_t close = text.find(')', open == std::string::npos ? 0 : open);
  if (key == std::string::npos || open == std::string::npos || close == std::string::npos) return "";
  const std::string inside = text.substr(open + 1, close - open - 1);
  const std::string sa = std::to_string(a), sb = std::to_string(b);
  const std::size_t pa = inside.find(sa), comma = inside.find(',');
  const std::size_t pb = comma == std::string::npos ? std::string::npos : inside.find(sb, comma);
  if (pa == std::string::npos || pb == std::string::npos || pa > comma) return "";
  std::string out = inside;
  out.replace(pb, sb.size(), sa);
  out.replace(pa, sa.size(), sb);
  return text.substr(0, open + 1) + out + text.substr(close);
}

}  // namespace

void Journal::end(InplaceMatrix& whole) {
  (void)whole;
  if (stages_[stage_].kind != InplaceStage::end) throw Error(ErrorKind::internal, "journal: not the end stage");
  if (Format(id_.p.format) == Format::npy) {
    // The journal says the data is complete before the header changes: a
    // resumed run then knows the file by either shape.
    Header h = h_;
    h.p.phase = 0;
    h.stage = stage_;
    h.prev = h.cur = h.saved = {};
    put_header(h);
    sync_journal(Barrier::end_marked);
    // The header last: until it is durable the file is its journal's matrix,
    // the data already transposed.
    fmt::Fd fd = fmt::open_existing(matrix_, true, matrix_);
    const std::uint64_t size = fmt::file_size(fd.get(), matrix_);
    unsigned char head[12] = {};
    fmt::pread_full(fd.get(), head, std::min<std::uint64_t>(size, sizeof head), 0, matrix_);
    const fmt::NpyPreamble pre = fmt::parse_npy_preamble(head, sizeof head, size, matrix_);
    std::string text(std::size_t(pre.header_len), '\0');
    fmt::pread_full(fd.get(), text.data(), pre.header_len, pre.header_start, matrix_);
    const std::uint64_t rows = id_.p.n, cols = id_.cols;
    std::string now = swapped_shape(text, rows, cols);
    if (now.empty() && !swapped_shape(text, cols, rows).empty()) now = text;  // written before a crash
    if (now.empty() || now.size() != text.size())
      throw Error(ErrorKind::input, matrix_ + ": its .npy header does not say shape (" + std::to_string(rows) + ", " +
                                        std::to_string(cols) + "), so its new shape cannot be written; its data is "
                                        "the transpose, shape (" + std::to_string(cols) + ", " + std::to_string(rows) + ")");
    if (now != text) fmt::pwrite_full(fd.get(), now.data(), now.size(), pre.header_start, matrix_);
    barrier(Barrier::end_synced, [&] { fmt::sync_file(fd.get(), matrix_, true); });
  }
  hit(Point::finish_flushed);
  remove();
}

}  // namespace gt::journal_impl
