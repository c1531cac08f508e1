// The plain in-place writer: straight to the matrix, no journal. Used for
// matrices in host memory and wherever a run asked for no crash safety.
#include <memory>

#include "gtranspose/inplace_writer.hpp"

namespace gt {

namespace {

class PlainInplaceWriter final : public InplaceWriter {
 public:
  void begin(const PairGrid&) override {}

  void write_batch(InplaceMatrix& m, const std::vector<PairWrite>& batch) override {
    for (const PairWrite& w : batch) {
      const Tile& a = w.pair.a;
      const Tile& b = w.pair.b;
      if (w.new_a) m.write(a.r0, a.c0, a.h, a.w, w.new_a, a.w);
      m.write(b.r0, b.c0, b.h, b.w, w.new_b, b.w);
    }
  }

  void finish(InplaceMatrix& m) override { m.flush(); }
  bool ordered() const override { return false; }
};

}  // namespace

std::unique_ptr<InplaceWriter> plain_inplace_writer() { return std::make_unique<PlainInplaceWriter>(); }

}  // namespace gt
