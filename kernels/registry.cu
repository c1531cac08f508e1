// The registry: every kernel by name, the shared problem checks, and the
// tuning table that `best()` (and `--kernel auto`) reads.
#include <algorithm>
#include <string>

#include "detail/common.cuh"
#include "detail/families.hpp"

namespace gt::kernels {

namespace detail {

namespace {
bool fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return false;
}
std::string shape_str(const Problem& p) { return std::to_string(p.rows) + "x" + std::to_string(p.cols); }
}  // namespace

bool check_problem(const char* name, const Problem& p, const Limits& lim, std::string* why) {
  const std::size_t s = p.elem_size;
  if (!(s == 1 || s == 2 || s == 4 || s == 8 || s == 16))
    return fail(why, "element size " + std::to_string(s) + " is not one of 1, 2, 4, 8, 16");
  if (lim.kind == Kind::inplace && p.rows != p.cols && !lim.rectangles)
    return fail(why, std::string(name) + " transposes in place: the matrix must be square, not " + shape_str(p) +
                         " (inplace-rect takes rectangles)");
  if (lim.kind == Kind::inplace && p.rows != p.cols && p.ld_in && p.ld_in != p.cols)
    return fail(why, "a " + shape_str(p) + " rectangle in place must be packed (ld_in " +
                         std::to_string(p.ld_in) + " is not cols): its transpose has rows of another length");
  if (p.ld_in && p.ld_in < p.cols)
    return fail(why, "ld_in " + std::to_string(p.ld_in) + " is smaller than cols " + std::to_string(p.cols));
  if (lim.kind != Kind::inplace && p.ld_out) {
    const std::uint64_t need = lim.kind == Kind::copy ? p.cols : p.rows;
    if (p.ld_out < need)
      return fail(why, "ld_out " + std::to_string(p.ld_out) + " is smaller than the output row length " +
                           std::to_string(need));
  }
  if (p.block_x || p.block_y) {
    if (!lim.block_shape) return fail(why, std::string(name) + " has a fixed block shape (block_x/block_y must be 0)");
    if (!p.block_x) return fail(why, "block_y is set without block_x");
    const std::uint64_t by = p.block_y ? p.block_y : 1;
    if (std::uint64_t(p.block_x) * by > lim.max_threads)
      return fail(why, "block " + std::to_string(p.block_x) + "x" + std::to_string(by) + " exceeds " +
                           std::to_string(lim.max_threads) + " threads");
    if (lim.square_tile_block && (by > p.block_x || p.block_x % by != 0))
      return fail(why, std::string(name) + " moves block_x x block_x tiles: block_y (" + std::to_string(by) +
                           ") must divide block_x (" + std::to_string(p.block_x) + ")");
  }
  return true;
}

void require(const KernelInfo& k, const void* in, const void* out, const Problem& p) {
  std::string why;
  if (!k.supports(p, &why)) throw Error(ErrorKind::usage, std::string(k.name) + ": " + why);
  const std::uintptr_t a = p.elem_size < 16 ? p.elem_size : 16;
  if (reinterpret_cast<std::uintptr_t>(in) % a != 0 || (out && reinterpret_cast<std::uintptr_t>(out) % a != 0))
    throw Error(ErrorKind::usage, std::string(k.name) + ": device pointers must be aligned to " + std::to_string(a) +
                                      " bytes for " + std::to_string(p.elem_size) + "-byte elements");
}

}  // namespace detail

const char* kind_name(Kind k) {
  return k == Kind::transpose ? "transpose" : k == Kind::inplace ? "in-place" : "copy";
}

const std::vector<KernelInfo>& registry() {
  using namespace detail;
  static const std::vector<KernelInfo> r = {
      copy_info(),         copy_col_info(),          naive_row_info(),   naive_col_info(),
      row_per_thread_info(), single_thread_info(),   tiled_info(),       smem_info(),
      padded_info(),       unrolled_info(),          unroll4_row_info(), unroll4_col_info(),
      diagonal_info(),     smem_unroll_pad_dyn_info(), inplace_swap_info(), inplace_tiled_info(),
      inplace_rect_info(),
  };
  return r;
}

const KernelInfo* find(std::string_view name) {
  for (const auto& k : registry())
    if (name == k.name) return &k;
  return nullptr;
}

namespace {
// The tuning table: the fastest kernel per element size, and the run that
// chose it. Rows are filled from docs/PERF.md ("Kernels (issue 4)").
struct BestRow {
  std::size_t elem_size;
  Kind kind;
  const char* name;
  const char* chosen_by;
};
constexpr BestRow kBest[] = {
    {1, Kind::transpose, "padded", "H100, 2026-11-22, gpu-check run 7: 95.3% of D2D on 16384x65536 (cuBLASLt 32.6%)"},
    {2, Kind::transpose, "padded", "H100, 2026-11-22, gpu-check run 7: 96.4-97.2% of D2D on 16384x32768 (cuBLASLt 65.0%)"},
    {4, Kind::transpose, "padded", "H100, 2026-11-22, gpu-check run 7: 96.7-97.2% of D2D on 16384^2 (Sgeam 95.3%)"},
    {8, Kind::transpose, "padded", "H100, 2026-11-22, gpu-check run 7: 97.5-97.8% of D2D on 16384x8192 (cuBLASLt 96.8%)"},
    {16, Kind::transpose, "padded", "H100, 2026-11-22, gpu-check run 7: 97.6-97.7% of D2D on 16384x4096 (Zgeam 96.7%)"},
    {1, Kind::inplace, "inplace-tiled", "H100, 2026-11-22, gpu-check run 7: 94.8% of D2D on 32768^2 (inplace-swap 5.9%)"},
    {2, Kind::inplace, "inplace-tiled", "H100, 2026-11-22, gpu-check run 7: 94.8% of D2D on 23168^2 (inplace-swap 9.4%)"},
    {4, Kind::inplace, "inplace-tiled", "H100, 2026-11-22, gpu-check run 7: 95.5-95.6% of D2D on 16384^2 (inplace-swap 15.8%)"},
    {8, Kind::inplace, "inplace-tiled", "H100, 2026-11-22, gpu-check run 7: 94.8% of D2D on 11584^2 (inplace-swap 31.3%)"},
    {16, Kind::inplace, "inplace-tiled", "H100, 2026-11-22, gpu-check run 7: 96.1-96.4% of D2D on 8192^2 (inplace-swap 74.5%)"},
};
}  // namespace

Choice best_choice(std::size_t elem_size, Kind kind) {
  if (kind == Kind::copy) return {find("copy"), "the upper bound by definition"};
  for (const auto& b : kBest)
    if (b.elem_size == elem_size && b.kind == kind) return {find(b.name), b.chosen_by};
  throw Error(ErrorKind::usage, "element size " + std::to_string(elem_size) + " is not one of 1, 2, 4, 8, 16");
}

const KernelInfo& best(std::size_t elem_size, Kind kind) { return *best_choice(elem_size, kind).kernel; }

std::string names(Kind kind) {
  std::string out;
  for (const auto& k : registry()) {
    if (k.kind != kind) continue;
    if (!out.empty()) out += ", ";
    out += k.name;
  }
  return out;
}

std::vector<Variant> tuning_variants(std::string_view kernel, std::size_t elem_size) {
  if (!(elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8 || elem_size == 16)) return {};
  if (kernel == "padded") return detail::padded_tuning_variants(elem_size);
  if (kernel == "inplace-tiled") return detail::inplace_tuning_variants(elem_size);
  return {};
}

std::string names() {
  std::string out;
  for (const auto& k : registry()) {
    if (!out.empty()) out += ", ";
    out += k.name;
  }
  return out;
}

}  // namespace gt::kernels
