// What the host-API tests share (test_host_api.cpp, test_host_api_cuda.cpp,
// test_memory_matrix.cpp): element sizes, small budgets, buffers of either
// kind of host memory, the shapes, and the out-of-place and in-place checks
// against the reference transpose.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "gtranspose/cuda.hpp"
#include "gtranspose/host.hpp"
#include "support/reference.hpp"

namespace gt::host_api_test {

using test::Bytes;
using test::first_difference;
using test::random_bytes;
using test::reference_transpose;

inline const std::size_t kElemSizes[] = {1, 2, 4, 8, 16};

// Small budgets: a few hundred KiB of matrix becomes dozens of tiles.
constexpr std::uint64_t kSmallHostMem = 64 << 10;
// The CPU engine transposes host memory where it lies, with no buffers for
// a budget to bound: a cap on a tile's elements makes its tiles many.
constexpr std::uint64_t kSmallTileElems = 256;
constexpr std::uint64_t kSmallDeviceMem = 256 << 10;

// Where a test matrix lives: ordinary memory, or pinned through alloc_pinned.
enum class Mem { pageable, pinned };
inline const char* mem_name(Mem m) { return m == Mem::pinned ? "pinned" : "pageable"; }

// A buffer of `n` bytes of either kind, holding `init`.
class Buffer {
 public:
  Buffer(Mem kind, const Bytes& init) {
    if (kind == Mem::pinned) {
      pinned_ = PinnedHostBuffer(init.size());
      p_ = static_cast<unsigned char*>(pinned_.data());
    } else {
      plain_.resize(init.size());
      p_ = plain_.data();
    }
    std::memcpy(p_, init.data(), init.size());
  }
  unsigned char* data() const { return p_; }

 private:
  PinnedHostBuffer pinned_;
  Bytes plain_;
  unsigned char* p_ = nullptr;
};

// One out-of-place case: a rows x cols input of es-byte elements with rows
// pad_in elements wider than needed, into an output whose rows are pad_out
// wider. Checks the whole output buffer (padding included) and that the
// input is unchanged; returns the report for further checks.
inline RunReport check_transpose(EngineChoice engine, std::size_t es, std::uint64_t rows, std::uint64_t cols,
                                 std::uint64_t pad_in, std::uint64_t pad_out, Mem in_mem = Mem::pageable,
                                 Mem out_mem = Mem::pageable, bool explicit_ld = false) {
  const std::uint64_t ld_in = cols + pad_in, ld_out = rows + pad_out;
  const Bytes in0 = random_bytes(rows * ld_in * es, rows * 7919 + cols * 31 + es);
  const Bytes out0 = random_bytes(cols * ld_out * es, rows + cols * 104729 + es);
  Buffer in(in_mem, in0), out(out_mem, out0);

  HostOptions o;
  o.engine = engine;
  o.run.host_mem = kSmallHostMem;
  // A device budget is the GPU's: the CPU engine refuses one (plan.hpp).
  if (engine == EngineChoice::cuda) o.run.device_mem = kSmallDeviceMem;
  if (engine == EngineChoice::cpu) o.run.tile_elems = kSmallTileElems;
  o.ld_in = pad_in || explicit_ld ? ld_in : 0;
  o.ld_out = pad_out || explicit_ld ? ld_out : 0;
  RunReport r = transpose(in.data(), out.data(), rows, cols, es, o);

  Bytes want = out0;
  reference_transpose(in0.data(), rows, cols, ld_in, want.data(), ld_out, es);
  EXPECT_EQ(first_difference(out.data(), want.data(), want.size(), es, ld_out), "") << "output";
  EXPECT_EQ(first_difference(in.data(), in0.data(), in0.size(), es, ld_in), "") << "input changed";
  EXPECT_EQ(r.shape, (Shape{rows, cols}));
  EXPECT_EQ(r.elem_size, es);
  EXPECT_EQ(r.bytes, rows * cols * es);
  EXPECT_EQ(r.mode, "out-of-place");
  return r;
}

// One in-place case: n x n with rows pad elements wider; the padding must
// stay untouched.
inline RunReport check_inplace(EngineChoice engine, std::size_t es, std::uint64_t n, std::uint64_t pad,
                               Mem mem = Mem::pageable) {
  const std::uint64_t ld = n + pad;
  const Bytes a0 = random_bytes(n * ld * es, n * 65537 + es);
  Buffer a(mem, a0);

  HostOptions o;
  o.engine = engine;
  o.run.host_mem = kSmallHostMem;
  // A device budget is the GPU's: the CPU engine refuses one (plan.hpp).
  if (engine == EngineChoice::cuda) o.run.device_mem = kSmallDeviceMem;
  if (engine == EngineChoice::cpu) o.run.tile_elems = kSmallTileElems;
  o.ld_in = pad ? ld : 0;
  RunReport r = transpose_inplace(a.data(), n, es, o);

  Bytes want = a0;
  reference_transpose(a0.data(), n, n, ld, want.data(), ld, es);
  EXPECT_EQ(first_difference(a.data(), want.data(), want.size(), es, ld), "");
  EXPECT_EQ(r.shape, (Shape{n, n}));
  EXPECT_EQ(r.mode, "in-place");
  return r;
}

struct ShapeCase {
  std::uint64_t rows, cols;
};
inline const ShapeCase kShapes[] = {
    {1, 1}, {1, 1000}, {1000, 1}, {2, 3},     {257, 131}, {131, 257},
    {64, 64}, {1000, 37}, {37, 1000}, {513, 511},
};
inline const std::uint64_t kSquares[] = {1, 2, 3, 17, 64, 129, 257};

// Test names: es4_257x131, es4_n129.
inline std::string shape_param_name(std::size_t es, const ShapeCase& s) {
  return "es" + std::to_string(es) + "_" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
}
inline std::string square_param_name(std::size_t es, std::uint64_t n) {
  return "es" + std::to_string(es) + "_n" + std::to_string(n);
}

}  // namespace gt::host_api_test
