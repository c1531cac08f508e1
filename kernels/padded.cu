// `padded`, the flagship: a padded shared-memory tiled transpose, tuned per
// element size. Tiles of TSR x TSC 16-byte super-elements (see
// detail/super.cuh): every global load and store is 16 bytes wide and
// coalesced, 1- and 2-byte elements are transposed 4x4 / 2x2 in registers
// with PRMT so shared memory moves whole 16-byte words, and the +1 super of
// padding per shared row keeps those accesses free of bank conflicts.
// Tiles that are partial, skinny (fewer rows or columns than a tile) or not
// 16-byte aligned take the element-wise path of the same kernel.
// With a block shape given (the block-shape sweep), `padded` runs the seeds'
// element-wise tile instead: block_x x block_x elements, padded by one.
#include <string>
#include <tuple>

#include "detail/common.cuh"
#include "detail/element_tile.cuh"
#include "detail/families.hpp"
#include "detail/super.cuh"
#include "gtranspose/kernel_tuning.hpp"

namespace gt::kernels::detail {
namespace {

// How a launch cuts the matrix (pick_tile).
enum class Mode : int {
  tiles,        // TR x TC tiles: 16-byte path for full aligned tiles, element path for the rest
  skinny_rows,  // fewer rows than a tile, packed output: R x tc tiles, 16-byte both sides
  skinny_cols,  // fewer columns than a tile, packed input: tr x C tiles, 16-byte both sides
  elements,     // skinny and unaligned or unpacked: element path, tiles as large as the buffer
};

template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MINB)
    padded_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, Dims d, unsigned tr,
                  unsigned tc, std::uint64_t ntr, std::uint64_t ntc, Mode mode, bool vec, unsigned group) {
  constexpr std::size_t S = Cfg::S;
  using T = carrier_t<S>;
  __shared__ uint4 sm[Cfg::TSR][Cfg::PITCH];
  const std::uint64_t ntiles = ntr * ntc;
  for (std::uint64_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
    const TileIdx t = grouped_tile(b, ntr, ntc, group);
    const std::uint64_t r0 = t.r * tr, c0 = t.c * tc;
    const unsigned vr = unsigned(d.rows - r0 < tr ? d.rows - r0 : tr);
    const unsigned vc = unsigned(d.cols - c0 < tc ? d.cols - c0 : tc);
    if (mode == Mode::tiles && vec && vr == Cfg::TR && vc == Cfg::TC) {
      TileRegs<Cfg> regs;
      load_tile<Cfg>(regs, in + (r0 * d.ld_in + c0) * S, d.ld_in * S);
      stash_tile<Cfg>(regs, sm);
      __syncthreads();
      store_tile<Cfg>(sm, out + (c0 * d.ld_out + r0) * S, d.ld_out * S);
    } else if (mode == Mode::skinny_rows && vc == tc) {
      skinny_rows_tile<S, Cfg::THREADS, Cfg::STREAM>(reinterpret_cast<unsigned char*>(&sm[0][0]), in, out, d.ld_in,
                                                      c0, vr, tc);
    } else if (mode == Mode::skinny_cols && vr == tr) {
      skinny_cols_tile<S, Cfg::THREADS, Cfg::STREAM>(reinterpret_cast<unsigned char*>(&sm[0][0]), in, out, d.ld_out,
                                                      r0, vc, tr);
    } else {
      T* e = reinterpret_cast<T*>(&sm[0][0]);
      edge_load<T, Cfg::THREADS>(e, reinterpret_cast<const T*>(in), d.ld_in, r0, c0, vr, vc);
      __syncthreads();
      edge_store<T, Cfg::THREADS>(e, reinterpret_cast<T*>(out), d.ld_out, r0, c0, vr, vc);
    }
    // The next tile reuses the shared buffer.
    if (b + gridDim.x < ntiles) __syncthreads();
  }
}

// The tile shape of a launch: the tuned TR x TC; for a matrix with fewer
// rows (columns) than a tile, all its rows (columns) and as many columns
// (rows) as the shared buffer holds, so skinny matrices still move ~16 KiB
// per block. Sizes leave room for the element path's odd pitch (vc | 1), which
// the partial last tile of a skinny launch takes.
// The skinny modes need 16-byte alignment only where rows start: the packed
// side is one run, whose tiles start at multiples of 16 bytes.
template <class Cfg>
Mode pick_tile(const void* in, const void* out, const Dims& d, unsigned& tr, unsigned& tc) {
  constexpr std::size_t S = Cfg::S;
  const bool ptrs = (reinterpret_cast<std::uintptr_t>(in) % 16) == 0 && (reinterpret_cast<std::uintptr_t>(out) % 16) == 0;
  constexpr std::uint64_t cap = Cfg::SMEM / Cfg::S;  // elements the shared buffer holds
  constexpr std::uint64_t V = 16 / Cfg::S;
  tr = Cfg::TR;
  tc = Cfg::TC;
  const bool few_rows = d.rows < std::uint64_t(Cfg::TR), few_cols = d.cols < std::uint64_t(Cfg::TC);
  if (few_rows && few_cols) {
    tr = unsigned(d.rows);
    tc = unsigned(d.cols);
    return Mode::elements;
  }
  if (few_rows) {
    tr = unsigned(d.rows);
    const std::uint64_t w = cap / tr - 1;
    if (ptrs && (d.ld_in * S) % 16 == 0 && d.ld_out == d.rows) {
      tc = unsigned(w / V * V);
      return Mode::skinny_rows;
    }
    tc = unsigned(w < d.cols ? w : d.cols);
    return Mode::elements;
  }
  if (few_cols) {
    tc = unsigned(d.cols);
    const std::uint64_t h = cap / (std::uint64_t(tc) + 1);
    if (ptrs && (d.ld_out * S) % 16 == 0 && d.ld_in == d.cols) {
      tr = unsigned(h / V * V);
      return Mode::skinny_cols;
    }
    tr = unsigned(h < d.rows ? h : d.rows);
    return Mode::elements;
  }
  return Mode::tiles;
}

// A tiling and the tile order it was tuned with (grouped_tile's G).
template <class Cfg, unsigned G>
struct Tuned {
  using cfg = Cfg;
  static constexpr unsigned group = G;
};

template <class Tn>
void launch_cfg(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  using Cfg = typename Tn::cfg;
  require(padded_info(), in, out, p);
  const Dims d = resolve(p, Kind::transpose);
  if (!d.rows || !d.cols) return;
  if (p.block_x) {
    launch_element_tile<Order::linear, 0, 0>("padded", in, out, d, p.elem_size, block_or(p, 32, 8), 1, stream);
    return;
  }
  if (p.elem_size != Cfg::S)
    throw Error(ErrorKind::usage, "padded variant for " + std::to_string(Cfg::S) + "-byte elements called with " +
                                      std::to_string(p.elem_size) + "-byte elements");
  const bool vec = vec16_ok(in, out, d, Cfg::S);
  unsigned tr, tc;
  const Mode mode = pick_tile<Cfg>(in, out, d, tr, tc);
  const std::uint64_t ntr = ceil_div(d.rows, tr), ntc = ceil_div(d.cols, tc);
  padded_kernel<Cfg><<<grid_1d(ntr * ntc), Cfg::THREADS, 0, stream>>>(static_cast<const unsigned char*>(in),
                                                                     static_cast<unsigned char*>(out), d, tr, tc, ntr,
                                                                     ntc, mode, vec, Tn::group);
  GT_KLAUNCHED("padded");
}

// Tunings: Tuned<SuperCfg<S, TSR, TSC, THREADS, MINB, A_DOWN, B_ACROSS, STREAM>, G>.
// `Default` is what the registry runs; `Alt` the alternatives the tuning
// runs compare (DISABLED_Tune.Catalogue). Each default names the run that
// chose it (docs/PERF.md, "Kernels (issue 4)").
template <std::size_t S>
struct PaddedTunings;

template <>
struct PaddedTunings<1> {
  // 256x128 bytes per tile: run 1 (H100, 2026-11-22) 88.9% vs 87.3% for 128x128.
  using C0 = SuperCfg<1, 64, 32, 256, 1, true, true, false>;
  using Default = Tuned<C0, 16>;
  using Alt = std::tuple<Tuned<C0, 1>, Tuned<C0, 8>, Tuned<C0, 32>, Tuned<SuperCfg<1, 32, 32, 256, 1, true, true, false>, 16>,
                         Tuned<SuperCfg<1, 64, 32, 512, 1, true, true, false>, 16>>;
};
template <>
struct PaddedTunings<2> {
  // 128x64 halves per tile: run 1, 93.9% (as 128x128) vs 92.0% for 64x128.
  using C0 = SuperCfg<2, 64, 16, 256, 1, true, true, false>;
  using Default = Tuned<C0, 16>;
  using Alt = std::tuple<Tuned<C0, 1>, Tuned<C0, 8>, Tuned<C0, 32>, Tuned<SuperCfg<2, 64, 32, 256, 1, true, true, false>, 16>,
                         Tuned<SuperCfg<2, 32, 32, 256, 1, true, true, false>, 16>>;
};
template <>
struct PaddedTunings<4> {
  // 64x128 floats per tile: run 1, 96.1% vs 95.8% for 64x64.
  using C0 = SuperCfg<4, 64, 32, 256, 1, false, true, false>;
  using Default = Tuned<C0, 16>;
  using Alt = std::tuple<Tuned<C0, 1>, Tuned<C0, 8>, Tuned<C0, 32>, Tuned<SuperCfg<4, 64, 16, 256, 1, false, true, false>, 16>,
                         Tuned<SuperCfg<4, 32, 32, 256, 1, false, true, false>, 16>>;
};
template <>
struct PaddedTunings<8> {
  // 64x32 doubles per tile, B lanes down the output rows: run 1, 97.6% vs
  // 97.0% with conflict-free B lanes across (longer output runs win over
  // 2-way bank conflicts).
  using C0 = SuperCfg<8, 64, 16, 256, 1, false, false, false>;
  using Default = Tuned<C0, 16>;
  using Alt = std::tuple<Tuned<C0, 1>, Tuned<C0, 8>, Tuned<C0, 32>, Tuned<SuperCfg<8, 64, 16, 256, 1, false, true, false>, 16>,
                         Tuned<SuperCfg<8, 64, 32, 256, 1, false, false, false>, 16>>;
};
template <>
struct PaddedTunings<16> {
  // 64x32 16-byte elements per tile: run 1, 97.4% vs 97.1% for 32x32.
  using C0 = SuperCfg<16, 64, 32, 256, 1, false, false, false>;
  using Default = Tuned<C0, 16>;
  using Alt = std::tuple<Tuned<C0, 1>, Tuned<C0, 8>, Tuned<C0, 32>, Tuned<SuperCfg<16, 32, 32, 256, 1, false, false, false>, 16>>;
};

template <class Tn>
std::string cfg_name(const char* kernel) {
  using Cfg = typename Tn::cfg;
  return std::string(kernel) + "/" + std::to_string(Cfg::TSR) + "x" + std::to_string(Cfg::TSC) + "s-" +
         std::to_string(Cfg::THREADS) + "t" + (Cfg::A_DOWN ? "-adown" : "") + (Cfg::B_ACROSS ? "-bacross" : "") +
         (Cfg::STREAM ? "-cs" : "") + "-g" + std::to_string(Tn::group);
}

template <class Tn>
std::string cfg_params() {
  using Cfg = typename Tn::cfg;
  return "tile " + std::to_string(Cfg::TR) + "x" + std::to_string(Cfg::TC) + " elements (" +
         std::to_string(Cfg::TSR) + "x" + std::to_string(Cfg::TSC) + " supers, " + std::to_string(Cfg::SMEM) +
         " B shared), " + std::to_string(Cfg::THREADS) + " threads, " + std::to_string(Cfg::NA * Cfg::K) +
         " loads + " + std::to_string(Cfg::NB * Cfg::C) + " stores of 16 B per thread, A lanes " +
         (Cfg::A_DOWN ? "down" : "along") + ", B lanes " + (Cfg::B_ACROSS ? "across" : "down") +
         (Cfg::STREAM ? ", evict-first" : "") + ", tiles in groups of " + std::to_string(Tn::group) + " tile rows";
}

template <std::size_t S>
std::vector<Variant> padded_variants() {
  using Tn = PaddedTunings<S>;
  std::vector<Variant> v;
  v.push_back({cfg_name<typename Tn::Default>("padded"), cfg_params<typename Tn::Default>(), true,
               launch_cfg<typename Tn::Default>});
  std::apply([&](auto... c) { (v.push_back({cfg_name<decltype(c)>("padded"), cfg_params<decltype(c)>(), false,
                                            launch_cfg<decltype(c)>}), ...); },
             typename Tn::Alt{});
  return v;
}

bool padded_supports(const Problem& p, std::string* why) {
  if (!check_problem("padded", p, Limits{Kind::transpose, true, true, 1024}, why)) return false;
  return !p.block_x || check_tile_smem("padded", p.block_x, 1, p.elem_size, why);
}

void launch_padded(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  with_elem_size(p.elem_size, [&](auto sz) {
    launch_cfg<typename PaddedTunings<decltype(sz)::value>::Default>(in, out, p, stream);
  });
}

}  // namespace

std::vector<Variant> padded_tuning_variants(std::size_t elem_size) {
  return with_elem_size(elem_size, [](auto sz) { return padded_variants<decltype(sz)::value>(); });
}

KernelInfo padded_info() {
  return {"padded",
          "the flagship: padded shared-memory tile of 16-byte super-elements, 16-byte coalesced accesses, "
          "register transposes for 1-/2-byte elements",
          Kind::transpose, padded_supports, launch_padded, true};
}

}  // namespace gt::kernels::detail
