// The same elements seen another way: a rectangle's stages (plan.hpp,
// InplaceShape) transpose square blocks of a matrix whose rows, once the
// matrix is permuted, are not the file's rows. A LinearView is rows
// [first, first + shape.rows) of the matrix's elements laid out `layout`
// elements a row (element (i, j) of the view is element number
// (first + i) * layout + j of the whole, row-major), cut into pieces of the
// matrix's own rows for every call.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "gtranspose/matrix.hpp"

namespace gt::journal_impl {

class LinearView final : public InplaceMatrix {
 public:
  LinearView(InplaceMatrix& m, std::uint64_t layout, std::uint64_t first, Shape shape, std::string what)
      : m_(m), layout_(layout), first_(first), what_(std::move(what)) {
    info_ = m.info();
    info_.shape = shape;
    const HostView* v = m.host_view();
    // Memory with no gaps between rows is the same memory in any layout.
    if (v && v->ld == m.info().shape.cols) {
      view_ = *v;
      view_.data = static_cast<unsigned char*>(v->data) + first * layout * info_.elem_size;
      view_.ld = layout;
      has_view_ = true;
    }
  }
  const MatrixInfo& info() const override { return info_; }
  const Location& location() const override { return m_.location(); }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    pieces(r0, c0, h, w, ld, [&](std::uint64_t r, std::uint64_t c, std::uint64_t n, std::uint64_t off) {
      m_.read(r, c, 1, n, static_cast<unsigned char*>(dst) + off, n);
    }, [&](std::uint64_t r) { m_.read(r, c0, h, w, dst, ld); });
  }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    pieces(r0, c0, h, w, ld, [&](std::uint64_t r, std::uint64_t c, std::uint64_t n, std::uint64_t off) {
      m_.write(r, c, 1, n, static_cast<const unsigned char*>(src) + off, n);
    }, [&](std::uint64_t r) { m_.write(r, c0, h, w, src, ld); });
  }
  void flush() override { m_.flush(); }
  void start_writeback(std::uint64_t r0, std::uint64_t h) override {
    const std::uint64_t cols = m_.info().shape.cols;
    const std::uint64_t a = (first_ + r0) * layout_ / cols, b = ((first_ + r0 + h) * layout_ + cols - 1) / cols;
    m_.start_writeback(a, std::min(b, m_.info().shape.rows) - a);
  }
  std::uint64_t reserved_bytes() const override { return m_.reserved_bytes(); }
  bool concurrent_io() const override { return m_.concurrent_io(); }
  const HostView* host_view() const override { return has_view_ ? &view_ : nullptr; }
  std::string describe() const override { return what_; }

 private:
  // Calls piece(row, col, n, byte offset in the buffer) for every run of the
  // matrix's rows the rectangle covers, or whole(row) once where the view's
  // rows are the matrix's rows.
  template <class Piece, class Whole>
  void pieces(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, std::uint64_t ld,
              const Piece& piece, const Whole& whole) {
    const std::uint64_t cols = m_.info().shape.cols;
    const std::size_t es = info_.elem_size;
    if (layout_ == cols) return whole(first_ + r0);
    for (std::uint64_t i = 0; i < h; ++i) {
      std::uint64_t at = (first_ + r0 + i) * layout_ + c0, left = w, off = i * ld * es;
      while (left) {
        const std::uint64_t c = at % cols, n = std::min(left, cols - c);
        piece(at / cols, c, n, off);
        at += n, left -= n, off += n * es;
      }
    }
  }

  InplaceMatrix& m_;
  std::uint64_t layout_, first_;
  std::string what_;
  MatrixInfo info_;
  HostView view_;
  bool has_view_ = false;
};

}  // namespace gt::journal_impl
