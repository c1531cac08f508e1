// A rectangle in place (plan.hpp, InplaceShape): the stages, the block
// views, and the segment permutation's cycles, chains and groups.
//
// Why blocks and permutations suffice (one for R = kC or C = kR, a + 1 for
// a grid, below). Tall, R = kC: the matrix is k
// stacked C x C blocks B_0 .. B_{k-1}, and its transpose (C x kC) is
// [B_0^T B_1^T ... B_{k-1}^T] side by side. Transposing each block in place
// leaves B_i^T's row j at segment i*C + j of the file (segments of C
// elements); the transpose wants it at segment j*k + i (row j, i-th part).
// That is the transpose of a k x C matrix whose elements are segments.
// Wide, C = kR: the matrix is [A_0 ... A_{k-1}] side by side (R x R each)
// and its transpose is A_0^T .. A_{k-1}^T stacked. Row j's segment i (index
// j*k + i) goes to i*R + j first (an R x k transpose of segments), which
// stacks the blocks; each block is then transposed in place. Every segment
// is a row (tall) or a k-th of a row (wide): the I/O is in row-sized pieces.
//
// A grid, R = a c and C = b c with a, b > 1: an a x b grid of c x c blocks
// B_Iq. Inside row of blocks I, row r's segment q (index r*b + q of the
// row of blocks) goes to q*c + r (a c x b transpose, as wide), which makes
// every block contiguous; each is transposed in place; then the segment at
// (I*b + q)*c + r, row r of B_Iq^T, goes to (q*c + r)*a + I (an a x bc
// transpose, as tall): row q*c + r of the transpose, its I-th part.
//
// The permutation by cycle following: segment d receives the segment at
// src(d); along a cycle d_0, d_1 = src(d_0), ... each move d_t <- d_{t+1}
// overwrites what the move before it read, so the moves of one cycle must
// reach the disk in order. A cycle is cut into chains that run side by side
// in a group, one move of every chain per step, a flush and a journal sync
// between steps; each chain's first destination is saved in the journal
// before the group starts, since the chain before it in the cycle reads it
// last. So the journal holds one segment per chain, and every other segment
// is written once.
#include "inplace/permute.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/cpu/thread_pool.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/journal.hpp"
#include "inplace/bands.hpp"
#include "inplace/views.hpp"

namespace gt {

namespace permute {

GroupWalker::GroupWalker(std::uint64_t P, std::uint64_t Q, std::uint64_t chains, std::uint64_t chain_length)
    : P_(P), Q_(Q), chains_(std::max<std::uint64_t>(1, chains)), len_(std::max<std::uint64_t>(1, chain_length)),
      n_(P * Q), seen_(std::size_t(P * Q), false) {}

bool GroupWalker::next(Group& g) {
  g = Group{};
  const auto add = [&](std::vector<Chain>& cycle) {
    const std::uint64_t base = g.chains.size();
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      Chain c = cycle[i];
      c.next = base + (i + 1) % cycle.size();
      g.steps = std::max(g.steps, c.len);
      g.chains.push_back(c);
    }
  };
  if (!pending_.empty()) {
    add(pending_);
    pending_.clear();
  }
  for (; scan_ < n_; ++scan_) {
    if (seen_[std::size_t(scan_)]) continue;
    // The cycle through scan_, cut into chains of at most len_ moves (longer
    // where a cycle would need more chains than a group holds: its chains
    // run in one group, since each needs the next one's first segment saved).
    std::uint64_t d = scan_, length = 0;
    do {
      seen_[std::size_t(d)] = true;
      ++length;
      d = src_of(d, P_, Q_);
    } while (d != scan_);
    if (length == 1) continue;  // a segment that stays where it is
    const std::uint64_t per = std::max(len_, (length + chains_ - 1) / chains_);
    std::vector<Chain> cycle;
    for (std::uint64_t k = 0; k < length; ++k, d = src_of(d, P_, Q_)) {
      if (k % per == 0) cycle.push_back({d, 0, 0});
      ++cycle.back().len;
    }
    if (g.chains.size() + cycle.size() > chains_) {
      pending_ = std::move(cycle);
      ++scan_;
      return true;
    }
    add(cycle);
  }
  return !g.chains.empty();
}

void permute_plain(InplaceMatrix& whole, const InplaceShape& shape, const PermuteRegion& region) {
  const std::uint64_t side = shape.side, cols = whole.info().shape.cols, n = region.P * region.Q;
  const std::size_t es = whole.info().elem_size;
  std::vector<unsigned char> held(std::size_t(side * es)), moving(held.size());
  std::vector<bool> seen(std::size_t(n), false);
  const auto read = [&](std::uint64_t x, unsigned char* buf) {
    const Place p = place_of(region.offset + x, side, cols);
    whole.read(p.row, p.col, 1, side, buf, side);
  };
  const auto write = [&](std::uint64_t x, const unsigned char* buf) {
    const Place p = place_of(region.offset + x, side, cols);
    whole.write(p.row, p.col, 1, side, buf, side);
  };
  for (std::uint64_t x = 0; x < n; ++x) {
    if (seen[std::size_t(x)]) continue;
    seen[std::size_t(x)] = true;
    std::uint64_t d = x, s = src_of(d, region.P, region.Q);
    if (s == x) continue;
    read(x, held.data());  // the first destination, which the cycle's last move needs
    while (s != x) {
      read(s, moving.data());
      write(d, moving.data());
      seen[std::size_t(s)] = true;
      d = s;
      s = src_of(d, region.P, region.Q);
    }
    write(d, held.data());
  }
}

void follow_cycles(unsigned char* base, std::uint64_t count, std::uint64_t seg_bytes, int threads,
                   const std::function<std::uint64_t(std::uint64_t)>& src,
                   const std::function<unsigned char*(int)>& held) {
  const std::size_t words = std::size_t((count + 63) / 64);
  std::vector<std::uint64_t> seen(words, 0), lead(words, 0);
  const auto bit = [](const std::vector<std::uint64_t>& v, std::uint64_t x) { return (v[x / 64] >> (x % 64)) & 1; };
  for (std::uint64_t x = 0; x < count; ++x) {
    if (bit(seen, x)) continue;
    std::uint64_t d = x;
    do {
      seen[d / 64] |= std::uint64_t(1) << (d % 64);
      d = src(d);
    } while (d != x);
    if (src(x) != x) lead[x / 64] |= std::uint64_t(1) << (x % 64);  // a segment that stays is no cycle
  }
  const std::uint64_t seg = seg_bytes;
  const int stripes = int(std::min<std::uint64_t>(std::uint64_t(std::max(1, threads)), std::max<std::uint64_t>(1, seg / 256)));
  const auto edge = [&](int w) { return w == stripes ? seg : seg * std::uint64_t(w) / std::uint64_t(stripes) / 64 * 64; };
  cpu::ThreadPool::shared().run(stripes, [&](int w) {
    const std::uint64_t b0 = edge(w), bytes = edge(w + 1) - b0;
    if (!bytes) return;
    std::vector<unsigned char> own;
    unsigned char* keep = held ? held(w) : (own.resize(static_cast<std::size_t>(bytes)), own.data());
    for (std::uint64_t x = 0; x < count; ++x) {
      if (!bit(lead, x)) continue;
      std::memcpy(keep, base + x * seg + b0, std::size_t(bytes));
      std::uint64_t d = x;
      for (std::uint64_t s = src(d); s != x; d = s, s = src(d))
        std::memcpy(base + d * seg + b0, base + s * seg + b0, std::size_t(bytes));
      std::memcpy(base + d * seg + b0, keep, std::size_t(bytes));
    }
  });
}

void permute_memory(unsigned char* base, std::size_t elem_size, std::uint64_t side, const PermuteRegion& region,
                    int threads) {
  const std::uint64_t seg = side * elem_size;
  follow_cycles(base + region.offset * seg, region.P * region.Q, seg, threads,
                [&](std::uint64_t d) { return src_of(d, region.P, region.Q); });
}

}  // namespace permute

std::vector<InplaceStage> inplace_stages(const InplaceShape& shape) {
  std::vector<InplaceStage> st;
  const auto blocks = [&] {
    for (std::uint64_t i = 0; i < shape.blocks; ++i) st.push_back({InplaceStage::block, i});
  };
  if (shape.kind == InplaceShape::square) return {{InplaceStage::block, 0}};
  if (shape.kind == InplaceShape::general) return bands::general_stages(shape);
  if (shape.b > 1)
    for (std::uint64_t I = 0; I < shape.a; ++I) st.push_back({InplaceStage::permute, I});
  blocks();
  if (shape.a > 1) st.push_back({InplaceStage::permute, kPermuteWhole});
  st.push_back({InplaceStage::end, 0});
  return st;
}

std::unique_ptr<InplaceMatrix> block_view(InplaceMatrix& whole, const InplaceShape& shape, std::uint64_t index) {
  // Every way the blocks are stacked, `side` rows of `side` elements each:
  // a tall matrix's from the start, a wide one's or a grid's once permuted.
  const std::string what = whole.describe() + ", block " + std::to_string(index + 1) + " of " +
                           std::to_string(shape.blocks);
  return std::make_unique<journal_impl::LinearView>(whole, shape.side, index * shape.side,
                                                    Shape{shape.side, shape.side}, what);
}

namespace {

// No journal: the plain writer's pairs, the permutation straight through.
class PlainStages final : public InplaceStages {
 public:
  PlainStages(const Shape& s)
      : shape_(s), is_(plan_inplace_shape(s, "the matrix")), stages_(inplace_stages(is_)), w_(plain_inplace_writer()) {}
  Shape shape() const override { return shape_; }
  void start_stage(std::uint64_t i) override { stage_ = i; }
  void permute(InplaceMatrix& whole, const PermutePlan& plan) override {
    const PermuteRegion r = permute_region(is_, stages_.at(std::size_t(stage_)).index);
    // Host memory (packed: a rectangle in place has no gaps between rows)
    // moves its segments where they lie, on the plan's threads.
    const HostView* v = whole.host_view();
    if (v && v->data && whole.concurrent_io() && v->ld == whole.info().shape.cols)
      permute::permute_memory(static_cast<unsigned char*>(v->data), whole.info().elem_size, is_.side, r, plan.threads);
    else
      permute::permute_plain(whole, is_, r);
    bytes_ += 2 * r.P * r.Q * is_.side * whole.info().elem_size;
  }
  void end(InplaceMatrix& whole) override { whole.flush(); }
  void band_step(InplaceMatrix& whole, const BandPlan& plan) override {
    const InplaceStage::Kind k = stages_.at(std::size_t(stage_)).kind;
    bands::run_plain(whole, k, plan);
    bytes_ += 2 * whole.info().bytes();
  }
  std::uint64_t stage_bytes() const override { return bytes_; }
  void begin(const PairGrid& plan) override { w_->begin(plan); }
  void write_batch(InplaceMatrix& m, const std::vector<PairWrite>& batch) override { w_->write_batch(m, batch); }
  void finish(InplaceMatrix& m) override { w_->finish(m); }
  bool ordered() const override { return w_->ordered(); }

 private:
  Shape shape_;
  InplaceShape is_;
  std::vector<InplaceStage> stages_;
  std::unique_ptr<InplaceWriter> w_;
  std::uint64_t bytes_ = 0;
  std::uint64_t stage_ = 0;
};

}  // namespace

std::unique_ptr<InplaceStages> plain_inplace_stages(const Shape& shape) { return std::make_unique<PlainStages>(shape); }

}  // namespace gt
