// Helpers for the format tests: temp folders, pattern matrices in memory,
// byte-level file writing, and a Source over memory to feed sinks.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/pattern.hpp"

namespace gt::test {

// A fresh folder under $TMPDIR, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/gt-formats-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }
  // Every name in the folder (to prove that nothing was left behind).
  std::vector<std::string> entries() const {
    std::vector<std::string> r;
    for (const auto& e : std::filesystem::directory_iterator(path_)) r.push_back(e.path().filename().string());
    return r;
  }

 private:
  std::string path_;
};

inline std::vector<unsigned char> pattern_matrix(std::uint64_t rows, std::uint64_t cols, std::size_t es,
                                                 std::uint64_t seed) {
  std::vector<unsigned char> m(rows * cols * es);
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t c = 0; c < cols; ++c) pattern_bytes(r, c, seed, es, &m[(r * cols + c) * es]);
  return m;
}

inline std::vector<unsigned char> transposed(const std::vector<unsigned char>& m, std::uint64_t rows,
                                             std::uint64_t cols, std::size_t es) {
  std::vector<unsigned char> t(m.size());
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t c = 0; c < cols; ++c)
      std::copy_n(&m[(r * cols + c) * es], es, &t[(c * rows + r) * es]);
  return t;
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

inline void write_bytes(const std::string& path, const std::vector<unsigned char>& bytes) {
  write_bytes(path, std::string(bytes.begin(), bytes.end()));
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A row-major matrix in memory, presented as a Source.
class MemSource final : public Source {
 public:
  MemSource(MatrixInfo info, std::vector<unsigned char> data) : info_(info), data_(std::move(data)) {
    loc_.path = "memory";
  }
  const MatrixInfo& info() const override { return info_; }
  const Location& location() const override { return loc_; }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    const std::size_t es = info_.elem_size;
    for (std::uint64_t i = 0; i < h; ++i)
      std::copy_n(&data_[((r0 + i) * info_.shape.cols + c0) * es], w * es,
                  static_cast<unsigned char*>(dst) + i * ld * es);
  }
  std::string describe() const override { return "memory matrix"; }
  const std::vector<unsigned char>& data() const { return data_; }

 private:
  MatrixInfo info_;
  std::vector<unsigned char> data_;
  Location loc_;
};

inline MatrixInfo info_of(Shape s, DType t, ByteOrder order = ByteOrder::little) {
  MatrixInfo i;
  i.shape = s;
  i.elem_size = dtype_size(t);
  i.dtype = t;
  i.order = dtype_size(t) == 1 ? ByteOrder::not_applicable : order;
  return i;
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

// Runs `body` and returns the gt::Error it throws (fails the test otherwise).
template <class F>
Error catch_error(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a gt::Error";
  return Error(ErrorKind::internal, "no error thrown");
}

inline bool have_python_module(const char* module) {
  std::string cmd = std::string("/usr/bin/python3 -c 'import ") + module + "' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all{DType::i8,  DType::u8,  DType::i16, DType::u16, DType::f16,
                                      DType::bf16, DType::i32, DType::u32, DType::f32, DType::i64,
                                      DType::u64, DType::f64, DType::c64, DType::c128};
  return all;
}

}  // namespace gt::test
