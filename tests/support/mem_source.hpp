// A row-major matrix in memory presented as a Source, to feed sinks and
// engines in tests, and the MatrixInfo of a shape and dtype.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gtranspose/format.hpp"

namespace gt::test {

inline MatrixInfo info_of(Shape s, DType t, ByteOrder order = ByteOrder::little) {
  MatrixInfo i;
  i.shape = s;
  i.elem_size = dtype_size(t);
  i.dtype = t;
  i.order = dtype_size(t) == 1 ? ByteOrder::not_applicable : order;
  return i;
}

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

}  // namespace gt::test
