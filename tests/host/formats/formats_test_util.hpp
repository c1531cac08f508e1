// Helpers of the format tests: writing and reading a whole matrix through a
// sink or source in uneven tiles or in the tiles of an engine's plan, Python
// interop, every dtype. What other
// tests share too (folders, files, pattern matrices, MemSource) is in
// tests/support/.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtranspose/format.hpp"
#include "gtranspose/tiles.hpp"
#include "support/errors.hpp"
#include "support/mem_source.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

namespace gt::test {

// A .npy file written byte by byte: magic, version, header length, dict, data.
inline std::string npy_bytes(int major, const std::string& dict, const std::vector<unsigned char>& data,
                      std::size_t pad_to = 64) {
  std::string out("\x93NUMPY", 6);
  out += char(major);
  out += char(0);
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  std::string text = dict;
  while ((8 + len_bytes + text.size() + 1) % pad_to) text += ' ';
  text += '\n';
  for (std::size_t i = 0; i < len_bytes; ++i) out += char((text.size() >> (8 * i)) & 0xff);
  out += text;
  out.append(data.begin(), data.end());
  return out;
}


// Writes `m` (rows x cols, row-major) to the sink in uneven tiles taken from
// a buffer with a leading dimension wider than the tile.
template <class Dst>
void write_tiled(Dst& dst, const std::vector<unsigned char>& m, std::uint64_t rows, std::uint64_t cols,
                 std::size_t es, std::uint64_t th = 5, std::uint64_t tw = 3) {
  for (std::uint64_t r0 = 0; r0 < rows; r0 += th)
    for (std::uint64_t c0 = 0; c0 < cols; c0 += tw) {
      const std::uint64_t h = std::min(th, rows - r0), w = std::min(tw, cols - c0), ld = w + 3;
      std::vector<unsigned char> buf(h * ld * es, 0xA5);
      for (std::uint64_t i = 0; i < h; ++i)
        std::copy_n(&m[((r0 + i) * cols + c0) * es], w * es, &buf[i * ld * es]);
      dst.write(r0, c0, h, w, buf.data(), ld);
    }
}

// Reads the whole matrix back in uneven tiles with ld > w and checks that
// the padding between rows is left alone.
template <class Src>
std::vector<unsigned char> read_tiled(Src& src, std::uint64_t th = 4, std::uint64_t tw = 6) {
  const auto& info = src.info();
  const std::uint64_t rows = info.shape.rows, cols = info.shape.cols;
  const std::size_t es = info.elem_size;
  std::vector<unsigned char> out(rows * cols * es);
  for (std::uint64_t r0 = 0; r0 < rows; r0 += th)
    for (std::uint64_t c0 = 0; c0 < cols; c0 += tw) {
      const std::uint64_t h = std::min(th, rows - r0), w = std::min(tw, cols - c0), ld = w + 2;
      std::vector<unsigned char> buf(h * ld * es, 0x5A);
      src.read(r0, c0, h, w, buf.data(), ld);
      for (std::uint64_t i = 0; i < h; ++i) {
        std::copy_n(&buf[i * ld * es], w * es, &out[((r0 + i) * cols + c0) * es]);
        for (std::uint64_t k = w * es; k < ld * es; ++k)
          if (buf[i * ld * es + k] != 0x5A) ADD_FAILURE() << "read wrote past w at row " << i;
      }
    }
  return out;
}

// The plan a streaming engine makes for a matrix: tiles of about
// tile_bytes, rounded to `preferred` blocks (a source's chunks) when given.
inline TileGrid plan_for(const MatrixInfo& in, std::uint64_t tile_bytes, Shape preferred = {0, 0}) {
  GridRequest req;
  req.shape = in.shape;
  req.elem_size = in.elem_size;
  req.tile_bytes = tile_bytes;
  req.preferred_block = preferred;
  return TileGrid(req);
}

// Writes the transpose of `src` through `sink` in the tiles of `plan`, in
// output order as the streaming engine visits them.
inline void write_planned(Source& src, Sink& sink, const TileGrid& plan) {
  const std::size_t es = src.info().elem_size;
  for (std::uint64_t k = 0; k < plan.count(); ++k) {
    const Tile t = plan.tile_output_order(k);
    std::vector<unsigned char> a(t.h * t.w * es);
    src.read(t.r0, t.c0, t.h, t.w, a.data(), t.w);
    const auto b = transposed(a, t.h, t.w, es);
    sink.write(t.c0, t.r0, t.w, t.h, b.data(), t.h);
  }
}

// The same in the tiles a plan for `src` gives (rounded to its chunks).
inline void write_planned(Source& src, Sink& sink, std::uint64_t tile_bytes) {
  write_planned(src, sink, plan_for(src.info(), tile_bytes, src.preferred_block()));
}

// Interop checks run the system's Python (not whichever is first on PATH).
inline bool have_python_module(const char* module) {
  std::string cmd = std::string("/usr/bin/python3 -c 'import ") + module + "' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Writes `code` to dir/mk.py and runs it with the folder as its argument;
// its exit status.
inline int run_python(const TempDir& dir, const std::string& code) {
  const std::string script = dir / "mk.py";
  write_file(script, code);
  return std::system(("/usr/bin/python3 " + script + " " + dir.path()).c_str());
}

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all{DType::i8,  DType::u8,  DType::i16, DType::u16, DType::f16,
                                      DType::bf16, DType::i32, DType::u32, DType::f32, DType::i64,
                                      DType::u64, DType::f64, DType::c64, DType::c128};
  return all;
}

}  // namespace gt::test
