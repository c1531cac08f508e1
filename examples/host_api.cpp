// Transposing a matrix a program holds in RAM: the code to copy.
//
//   build/examples/gt-example-host-api [ROWS COLS]
//
// Allocates a ROWS x COLS float matrix (pinned where a GPU exists, so the GPU
// copies it by DMA directly; ordinary memory works too, a little slower),
// transposes it with gt::transpose, checks every element and prints the
// report. Exits 0 when the transpose is right.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "gtranspose/cuda.hpp"    // alloc_pinned, cuda_device_count
#include "gtranspose/error.hpp"   // gt::Error
#include "gtranspose/host.hpp"    // gt::transpose
#include "gtranspose/report.hpp"  // gt::format_report

namespace {

// Float storage that is pinned when a GPU exists, ordinary memory otherwise.
struct Matrix {
  gt::PinnedHostBuffer pinned;
  std::vector<float> plain;
  float* data = nullptr;

  explicit Matrix(std::size_t elems) {
    if (gt::cuda_device_count() > 0) {
      pinned = gt::PinnedHostBuffer(elems * sizeof(float));
      data = static_cast<float*>(pinned.data());
    } else {
      plain.resize(elems);
      data = plain.data();
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t rows = argc > 2 ? std::strtoull(argv[1], nullptr, 10) : 3000;
  const std::uint64_t cols = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2000;
  try {
    Matrix a(rows * cols), b(rows * cols);
    for (std::uint64_t i = 0; i < rows; ++i)
      for (std::uint64_t j = 0; j < cols; ++j) a.data[i * cols + j] = float(i * cols + j);

    // b (cols x rows) = transpose of a (rows x cols). HostOptions picks the
    // engine (auto: the GPU where there is one), budgets and leading dimensions.
    gt::HostOptions opts;
    gt::RunReport report = gt::transpose(a.data, b.data, rows, cols, sizeof(float), opts);

    for (std::uint64_t i = 0; i < rows; ++i)
      for (std::uint64_t j = 0; j < cols; ++j)
        if (b.data[j * rows + i] != a.data[i * cols + j]) {
          std::fprintf(stderr, "wrong element at output (%llu, %llu)\n", (unsigned long long)j, (unsigned long long)i);
          return 1;
        }
    std::printf("%s\ntranspose checked: every element in place\n", gt::format_report(report).c_str());
    return 0;
  } catch (const gt::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return e.exit_code();
  }
}
