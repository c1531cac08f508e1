#include "inplace/bands.hpp"

#include <algorithm>
#include <vector>

#include "engine/cpu/host_buffer.hpp"
#include "engine/cpu/thread_pool.hpp"
#include "gtranspose/error.hpp"
#include "inplace/steps.hpp"

namespace gt::bands {

namespace {

using u64 = std::uint64_t;

template <std::size_t S>
void permute_typed(InplaceStage::Kind k, const rect::Maps& mp, const Band& b, const unsigned char* in,
                   unsigned char* out, const BandPlan& plan) {
  using E = inplace::Elem<S>;
  const E* from = reinterpret_cast<const E*>(in);
  E* to = reinterpret_cast<E*>(out);
  auto& pool = cpu::ThreadPool::shared();
  const int threads = int(std::max<u64>(1, std::min<u64>(u64(plan.threads), k == InplaceStage::row_shuffle ? b.h : b.w)));
  if (k == InplaceStage::row_shuffle) {
    // Band rows r0 .. r0 + h - 1, each whole (w = C): a gather inside the row.
    pool.run(threads, [&](int t) {
      for (u64 i = u64(t); i < b.h; i += u64(threads)) inplace::shuffle_row(mp, b.r0 + i, from + i * b.w, to + i * b.w);
    });
    return;
  }
  // Whole columns c0 .. c0 + w - 1 (h = R), a group of columns at a time.
  const bool rotate = k == InplaceStage::rotate;
  const u64 g = std::max<u64>(1, plan.group), groups = (b.w + g - 1) / g;
  pool.run(threads, [&](int t) {
    std::vector<u64> shift(std::size_t(g), 0);
    for (u64 q = u64(t); q < groups; q += u64(threads)) {
      const u64 j0 = q * g;
      inplace::gather_columns(mp, rotate, b.c0 + j0, std::min(g, b.w - j0), from + j0, b.w, to + j0, b.w, shift.data());
    }
  });
}

}  // namespace

std::uint64_t extent(InplaceStage::Kind k, const Shape& s) { return k == InplaceStage::row_shuffle ? s.rows : s.cols; }

Band band_of(InplaceStage::Kind k, const Shape& s, std::uint64_t first, std::uint64_t count) {
  if (k == InplaceStage::row_shuffle) return {first, 0, count, s.cols};
  return {0, first, s.rows, count};
}

std::uint64_t per_band(InplaceStage::Kind k, const BandPlan& plan) {
  return k == InplaceStage::row_shuffle ? plan.rows : plan.cols;
}

std::vector<InplaceStage> general_stages(const InplaceShape& shape) {
  std::vector<InplaceStage> st;
  if (shape.side > 1) st.push_back({InplaceStage::rotate, 0});
  st.push_back({InplaceStage::row_shuffle, 0});
  st.push_back({InplaceStage::col_shuffle, 0});
  st.push_back({InplaceStage::end, 0});
  return st;
}

void permute_band(InplaceStage::Kind k, const rect::Maps& maps, const Band& b, const unsigned char* in,
                  unsigned char* out, std::size_t es, const BandPlan& plan) {
  if (!is_band_stage(k)) throw Error(ErrorKind::internal, "permute_band: not a band stage");
  with_elem_size(es, [&](auto sz) { permute_typed<decltype(sz)::value>(k, maps, b, in, out, plan); });
}

void run_plain(InplaceMatrix& whole, InplaceStage::Kind k, const BandPlan& plan) {
  const Shape s = whole.info().shape;
  const std::size_t es = whole.info().elem_size;
  const rect::Maps maps = rect::make_maps(s.rows, s.cols);
  const std::uint64_t n = extent(k, s), per = per_band(k, plan);
  const std::size_t most = std::size_t(band_of(k, s, 0, std::min(per, n)).elems() * es);
  cpu::HostBuffer in(most), out(most);
  for (std::uint64_t x = 0; x < n; x += per) {
    const Band b = band_of(k, s, x, std::min(per, n - x));
    whole.read(b.r0, b.c0, b.h, b.w, in.data(), b.w);
    permute_band(k, maps, b, in.data(), out.data(), es, plan);
    whole.write(b.r0, b.c0, b.h, b.w, out.data(), b.w);
  }
  whole.flush();
}

}  // namespace gt::bands
