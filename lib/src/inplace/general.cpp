#include "inplace/general.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
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

// Rows ahead of the one being moved whose band segment is prefetched: the
// column passes step down the rows a row's length apart, where no hardware
// prefetcher follows. docs/PERF.md ("Rectangles in place in host memory"):
// f32 13001x20651 on the 2-core machine, 16 rows ahead 0.68 s in all, 64 to
// 192 rows 0.45-0.47 s, none 0.89 s.
constexpr u64 kPrefetchRows = 64;

inline void prefetch_read(const void* p) { __builtin_prefetch(p, 0); }
inline void prefetch_write(void* p) { __builtin_prefetch(p, 1); }

// One band of a column rotation: columns j0 .. j0 + w - 1 of the m x n
// matrix d, each column j moved up by shift[jj] = s(j0 + jj) rows (each below
// m): new[i][j] = old[(i + s(j)) mod m][j]. Source rows are read in order,
// each band segment whole, and its elements scattered to the rows of `tmp`
// (m x w) they belong in; tmp is then written back row by row. `delta` and
// `off`: scratch of w each. With `rows` (step 3's maps), row i is written
// back from tmp's row P(i), P = rect::permuted_row: a permutation of whole
// rows moves no element across bands, so each band takes it as it goes back,
// and the permutation costs no pass of its own.
template <class E>
void rotate_band(E* d, u64 m, u64 n, u64 j0, u64 w, const u64* shift, E* tmp, u64* delta, std::int64_t* off,
                 const Maps* rows = nullptr) {
  // Element jj of source row r belongs in row (r - s_jj) mod m = x0 - delta_jj
  // (mod m), x0 = (r - s_0) mod m, delta_jj = (s_jj - s_0) mod m.
  u64 most = 0;
  bool same = true, diagonal = true;  // delta_jj = 0 for all jj; delta_jj = jj
  for (u64 jj = 0; jj < w; ++jj) {
    delta[jj] = (shift[jj] + m - shift[0]) % m;
    most = std::max(most, delta[jj]);
    off[jj] = std::int64_t(jj) - std::int64_t(delta[jj] * w);
    same = same && delta[jj] == 0;
    diagonal = diagonal && delta[jj] == jj;
  }
  const std::int64_t step = 1 - std::int64_t(w);
  u64 x0 = (m - shift[0]) % m;
  for (u64 r = 0; r < m; ++r) {
    if (r + kPrefetchRows < m) {
      const E* p = d + (r + kPrefetchRows) * n + j0;
      prefetch_read(p);
      prefetch_read(p + w - 1);
    }
    const E* src = d + r * n + j0;
    if (same) {
      // The band moves as one: its segment lands whole in one row.
      std::memcpy(tmp + x0 * w, src, std::size_t(w) * sizeof(E));
    } else if (x0 >= most) {
      E* base = tmp + x0 * w;
      if (diagonal) {
        for (u64 jj = 0; jj < w; ++jj, base += step) *base = src[jj];
      } else {
        for (u64 jj = 0; jj < w; ++jj) base[off[jj]] = src[jj];
      }
    } else {
      for (u64 jj = 0; jj < w; ++jj) {
        u64 x = x0 + m - delta[jj];
        if (x >= m) x -= m;
        tmp[x * w + jj] = src[jj];
      }
    }
    if (++x0 == m) x0 = 0;
  }
  // Written back in row order; with `rows`, row i from tmp's row P(i), P
  // stepped once a row. (The same loop with the row map passed in as a
  // lambda ran u8 13001x20651's step 25% slower on the 2-core VM; this one
  // runs as fast as the plain write-back.)
  std::optional<rect::PermIter> it;
  if (rows) it.emplace(*rows, 0, 1);
  for (u64 i = 0; i < m; ++i) {
    if (i + kPrefetchRows < m) {
      E* p = d + (i + kPrefetchRows) * n + j0;
      prefetch_write(p);
      prefetch_write(p + w - 1);
    }
    u64 t = i;
    if (it) {
      t = it->value(*rows);
      it->advance(*rows);
    }
    std::memcpy(d + i * n + j0, tmp + t * w, std::size_t(w) * sizeof(E));
  }
}

template <std::size_t S>
std::vector<StageStat> run_typed(unsigned char* data, const Maps& mp, const GeneralRun& run, const StageHook& on_stage) {
  using E = Elem<S>;
  E* d = reinterpret_cast<E*>(data);
  const u64 m = mp.m, n = mp.n, band = run.band;
  const int threads = run.threads;
  const u64 per_thread = std::max(n, m * band);
  std::vector<std::unique_ptr<E[]>> scratch(static_cast<std::size_t>(threads));
  for (auto& s : scratch) s.reset(new E[std::size_t(per_thread)]);
  auto& pool = cpu::ThreadPool::shared();

  // Each step moves the whole matrix once; the report has each one's time.
  std::vector<StageStat> stages;
  auto step = [&](const char* name, auto&& body) {
    if (on_stage) on_stage(name);
    const auto t0 = std::chrono::steady_clock::now();
    body();
    stages.push_back({name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), m * n * S});
  };

  // The column steps: bands of `band` columns dealt round the threads,
  // fn(tmp, j0, width, shift) for each (tmp: the thread's scratch; shift,
  // delta, off: `band` entries of its own).
  auto each_band = [&](auto fn) {
    const u64 bands = (n + band - 1) / band;
    pool.run(threads, [&](int w) {
      E* tmp = scratch[std::size_t(w)].get();
      std::vector<u64> shift(static_cast<std::size_t>(band)), delta(static_cast<std::size_t>(band));
      std::vector<std::int64_t> off(static_cast<std::size_t>(band));
      for (u64 q = u64(w); q < bands; q += u64(threads)) {
        const u64 j0 = q * band;
        fn(tmp, j0, std::min(n, j0 + band) - j0, shift.data(), delta.data(), off.data());
      }
    });
  };
  // A column rotation, shift_of(j) the rows column j moves up (below m),
  // then (rows) whole rows permuted by step 3's row map.
  auto rotate = [&](auto shift_of, const Maps* rows) {
    each_band([&](E* tmp, u64 j0, u64 wdt, u64* shift, u64* delta, std::int64_t* off) {
      for (u64 jj = 0; jj < wdt; ++jj) shift[jj] = shift_of(j0 + jj);
      rotate_band(d, m, n, j0, wdt, shift, tmp, delta, off, rows);
    });
  };

  // Step 1: column j up by j / b. Output row i takes its group q (columns
  // q b .. q b + b - 1) from row i + q, so where c rows fit a thread's
  // scratch (stream_rotation) steps 1 and 2 run as one pass down runs of
  // whole rows: each thread takes a run in order, builds row i's rotation
  // in its scratch from the rows below (which it has not written yet) and
  // shuffles it into row i (step 2). The c - 1 rows past its run (the next
  // run's first, or the matrix's first past the last row) are saved before
  // any thread writes. Else step 1 in bands of columns, then step 2.
  //
  // Step 2: each row copied whole to the thread's scratch (a stream), then
  // gathered back from there in cache (docs/PERF.md: 0.21 -> 0.17 s at f32
  // 13001x20651 against gathering from the row and copying back; the
  // gather's four index streams are shuffle_row's).
  if (mp.c > 1 && run.stream_rotation) {
    step("rotate and shuffle rows", [&] {
      const u64 halo = mp.c - 1, b = mp.b;
      auto run_of = [&](int w) { return std::pair<u64, u64>{m * u64(w) / u64(threads), m * u64(w + 1) / u64(threads)}; };
      pool.run(threads, [&](int w) {
        const u64 end = run_of(w).second;
        E* saved = scratch[std::size_t(w)].get();
        for (u64 h = 0; h < halo; ++h) std::memcpy(saved + h * n, d + ((end + h) % m) * n, std::size_t(n) * S);
      });
      pool.run(threads, [&](int w) {
        const auto [begin, end] = run_of(w);
        const E* saved = scratch[std::size_t(w)].get();
        E* tmp = scratch[std::size_t(w)].get() + halo * n;  // row i rotated
        for (u64 i = begin; i < end; ++i) {
          E* row = d + i * n;
          std::memcpy(tmp, row, std::size_t(b) * S);
          for (u64 q = 1; q < mp.c; ++q) {
            const E* from = i + q < end ? d + (i + q) * n : saved + (i + q - end) * n;
            std::memcpy(tmp + q * b, from + q * b, std::size_t(b) * S);
          }
          shuffle_row(mp, i, tmp, row);
        }
      });
    });
  } else {
    if (mp.c > 1) step("rotate columns", [&] { rotate([&](u64 j) { return j / mp.b; }, nullptr); });
    step("shuffle rows", [&] {
      pool.run(threads, [&](int w) {
        E* tmp = scratch[std::size_t(w)].get();
        for (u64 i = u64(w); i < m; i += u64(threads)) {
          E* row = d + i * n;
          std::memcpy(tmp, row, std::size_t(n) * S);
          shuffle_row(mp, i, tmp, row);
        }
      });
    });
  }

  if (!run.skew) {
    // Step 3 in one pass: bands of columns gathered down the rows.
    step("shuffle columns", [&] {
      each_band([&](E* tmp, u64 j0, u64 wdt, u64* shift, u64*, std::int64_t*) {
        gather_columns(mp, false, j0, wdt, d + j0, n, tmp, wdt, shift);
        for (u64 i = 0; i < m; ++i) std::memcpy(d + i * n + j0, tmp + i * wdt, std::size_t(wdt) * S);
      });
    });
    return stages;
  }
  // Step 3, new[i][j] = old[(P(i) + j) mod m][j], as a skew and a row
  // permutation in one pass: each band's columns moved up by j (mod m),
  // X[t][j] = old[(t + j) mod m][j], scattered from the band's segments in
  // row order into the thread's scratch, then written back as new[i] =
  // X[P(i)] (rotate_band's `rows`). The permutation was a pass of its own,
  // whole rows along P's cycles, until the session of 2026-12-08.
  step("shuffle columns", [&] { rotate([&](u64 j) { return j % m; }, &mp); });
  return stages;
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
  // Bands of columns a cache line wide (64 bytes of each row), narrower
  // where the budget says so: docs/PERF.md ("Rectangles in place in host
  // memory"), f32 13001x20651 on 2 cores: 64 and 128 bytes alike within the
  // machine's noise; at 64 a band's scratch of 13001 rows fits a 1 MiB L2.
  r.band = std::max<std::uint64_t>(1, std::min<std::uint64_t>(cols, std::max<std::size_t>(1, 64 / es)));
  while (r.band > 1 && general_scratch_per_thread(rows, cols, es, r.band) > budget) r.band /= 2;
  const std::uint64_t per = general_scratch_per_thread(rows, cols, es, r.band);
  r.threads = int(std::max<std::uint64_t>(1, std::min<std::uint64_t>(std::uint64_t(r.threads), budget / per)));
  // Step 3 as a skew of the columns written back in the row map's order
  // where rows are a cache line or more; else gathered down the columns.
  // Both in one pass, through the same scratch.
  r.skew = cols * es >= 64;
  r.scratch = per * std::uint64_t(r.threads);
  const std::uint64_t c = std::gcd(rows, cols);
  r.rotated = c > 1;
  // Steps 1 and 2 in one pass down runs of whole rows where a thread's
  // scratch holds the c - 1 rows past its run and the row it rotates; else
  // step 1 in bands of columns.
  r.stream_rotation = r.rotated && c * cols <= per / es && rows >= std::uint64_t(r.threads);
  return r;
}

std::vector<StageStat> transpose_general(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t es,
                                         const GeneralRun& run, const StageHook& on_stage) {
  if (rows == 0 || cols == 0) return {};
  const Maps mp = rect::make_maps(rows, cols);
  auto* p = static_cast<unsigned char*>(data);
  std::vector<StageStat> stages;
  with_elem_size(es, [&](auto sz) { stages = run_typed<decltype(sz)::value>(p, mp, run, on_stage); });
  return stages;
}

}  // namespace gt::inplace
