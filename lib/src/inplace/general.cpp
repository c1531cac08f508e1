#include "inplace/general.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "engine/cpu/thread_pool.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/rect_maps.hpp"
#include "gtranspose/sizes.hpp"
#include "inplace/steps.hpp"

namespace gt::inplace {
namespace {

using u64 = std::uint64_t;

using rect::Maps;

template <std::size_t S>
void run_typed(unsigned char* data, const Maps& mp, const GeneralRun& run) {
  using E = Elem<S>;
  E* d = reinterpret_cast<E*>(data);
  const u64 m = mp.m, n = mp.n, band = run.band;
  const int threads = run.threads;
  const u64 per_thread = std::max(n, m * band);
  std::vector<std::unique_ptr<E[]>> scratch(static_cast<std::size_t>(threads));
  for (auto& s : scratch) s.reset(new E[std::size_t(per_thread)]);
  auto& pool = cpu::ThreadPool::shared();

  // Steps 1 and 3: bands of `band` columns, each gathered into the thread's
  // scratch (m rows of the band's width) and written back row by row.
  auto columns = [&](bool rotate) {
    const u64 bands = (n + band - 1) / band;
    pool.run(threads, [&](int w) {
      E* tmp = scratch[std::size_t(w)].get();
      std::vector<u64> shift(static_cast<std::size_t>(band));
      for (u64 q = u64(w); q < bands; q += u64(threads)) {
        const u64 j0 = q * band, wdt = std::min(n, j0 + band) - j0;
        gather_columns(mp, rotate, j0, wdt, d + j0, n, tmp, wdt, shift.data());
        for (u64 i = 0; i < m; ++i) std::memcpy(d + i * n + j0, tmp + i * wdt, std::size_t(wdt) * S);
      }
    });
  };

  if (mp.c > 1) columns(true);
  pool.run(threads, [&](int w) {
    E* tmp = scratch[std::size_t(w)].get();
    for (u64 i = u64(w); i < m; i += u64(threads)) {
      E* row = d + i * n;
      shuffle_row(mp, i, row, tmp);
      std::memcpy(row, tmp, std::size_t(n) * S);
    }
  });
  columns(false);
}

}  // namespace

std::uint64_t general_scratch_per_thread(std::uint64_t rows, std::uint64_t cols, std::size_t es, std::uint64_t band) {
  return checked_mul(std::max(cols, checked_mul(rows, band, "in-place scratch")), es, "in-place scratch");
}

GeneralRun plan_general(std::uint64_t rows, std::uint64_t cols, std::size_t es, int threads, std::uint64_t budget) {
  GeneralRun r;
  const std::uint64_t least = general_scratch_per_thread(rows, cols, es, 1);
  if (least > budget)
    throw Error(ErrorKind::usage, "a " + std::to_string(rows) + "x" + std::to_string(cols) +
                                      " rectangle in place in memory needs a row or a column of scratch (" +
                                      format_bytes(least) + "): give {host_mem} of at least " + format_bytes(least));
  r.threads = std::max(1, cpu::resolve_threads(threads));
  // Bands of columns wide enough that a band's gather reads whole cache
  // lines of each row (64 bytes), narrower where the budget says so.
  r.band = std::max<std::uint64_t>(1, std::min<std::uint64_t>(cols, std::max<std::size_t>(1, 64 / es)));
  while (r.band > 1 && general_scratch_per_thread(rows, cols, es, r.band) > budget) r.band /= 2;
  const std::uint64_t per = general_scratch_per_thread(rows, cols, es, r.band);
  r.threads = int(std::max<std::uint64_t>(1, std::min<std::uint64_t>(std::uint64_t(r.threads), budget / per)));
  r.scratch = per * std::uint64_t(r.threads);
  r.rotated = std::gcd(rows, cols) > 1;
  return r;
}

void transpose_general(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t es, const GeneralRun& run) {
  if (rows == 0 || cols == 0) return;
  const Maps mp = rect::make_maps(rows, cols);
  auto* p = static_cast<unsigned char*>(data);
  with_elem_size(es, [&](auto sz) { run_typed<decltype(sz)::value>(p, mp, run); });
}

}  // namespace gt::inplace
