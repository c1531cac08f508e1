// An InplaceMatrix whose every call takes one lock: for an in-place engine
// that reads the next pair on one thread while another writes through the
// journal, on a matrix that allows one call at a time (or that the engine
// wants to serialise). The lock is per call, so reads still fall between the
// journal's writes and fsyncs. Shared by the CPU and CUDA engines.
#pragma once
#include <mutex>

#include "gtranspose/format.hpp"

namespace gt {

class LockedMatrix final : public InplaceMatrix {
 public:
  LockedMatrix(InplaceMatrix& m, std::mutex& mu) : m_(m), mu_(mu) {}
  const MatrixInfo& info() const override { return m_.info(); }
  const Location& location() const override { return m_.location(); }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    std::lock_guard<std::mutex> lk(mu_);
    m_.read(r0, c0, h, w, dst, ld);
  }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override {
    std::lock_guard<std::mutex> lk(mu_);
    m_.write(r0, c0, h, w, src, ld);
  }
  void flush() override {
    std::lock_guard<std::mutex> lk(mu_);
    m_.flush();
  }
  void start_writeback(std::uint64_t r0, std::uint64_t h) override {
    std::lock_guard<std::mutex> lk(mu_);
    m_.start_writeback(r0, h);
  }
  std::uint64_t reserved_bytes() const override { return m_.reserved_bytes(); }
  const HostView* host_view() const override { return m_.host_view(); }
  std::string describe() const override { return m_.describe(); }

 private:
  InplaceMatrix& m_;
  std::mutex& mu_;
};

}  // namespace gt
