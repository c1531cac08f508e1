// gt-gen: writes a matrix of any shape, dtype and format filled with the
// position pattern (pattern.hpp), and verifies files against it, so a
// transposed file of any size is checked without a copy of the input.
//
//   gt-gen OUT --shape RxC --dtype T [--seed S] [--force]
//   gt-gen --verify FILE [--transposed] [--seed S] [--shape RxC --dtype T for raw]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <vector>

#include "common.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/pattern.hpp"
#include "gtranspose/sizes.hpp"
#include "signals.hpp"

namespace {

// A Source that describes the matrix whose *transpose* gt-gen wants to write:
// create_sink() makes the transpose of its source, so a C x R description
// yields an R x C output. Nothing reads from it.
class ShapeOnlySource final : public gt::Source {
 public:
  ShapeOnlySource(gt::Shape out_shape, gt::DType t, const std::string& where) : loc_{where, "", gt::Format::raw} {
    info_.shape = out_shape.transposed();
    info_.elem_size = gt::dtype_size(t);
    info_.dtype = t;
    info_.order = gt::ByteOrder::little;
  }
  const gt::MatrixInfo& info() const override { return info_; }
  const gt::Location& location() const override { return loc_; }
  void read(std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, void*, std::uint64_t) override {
    throw gt::Error(gt::ErrorKind::internal, "gt-gen's shape-only source cannot be read");
  }
  std::string describe() const override { return "pattern"; }

 private:
  gt::MatrixInfo info_;
  gt::Location loc_;
};

// Rows per stripe so a stripe stays near 64 MiB.
std::uint64_t stripe_rows(const gt::MatrixInfo& m) {
  std::uint64_t row = std::max<std::uint64_t>(1, m.shape.cols * m.elem_size);
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(m.shape.rows, (std::uint64_t(64) << 20) / row));
}

int generate(const std::string& out, const gt::Shape& shape, gt::DType t, std::uint64_t seed, bool force) {
  ShapeOnlySource desc(shape, t, out);
  auto sink = gt::create_sink(out, desc, gt::SinkOptions{force});
  const gt::MatrixInfo& m = sink->info();
  const std::size_t es = m.elem_size;
  const std::uint64_t sr = stripe_rows(m);
  std::vector<unsigned char> buf(std::size_t(sr * m.shape.cols * es));
  for (std::uint64_t r0 = 0; r0 < m.shape.rows; r0 += sr) {
    std::uint64_t h = std::min(sr, m.shape.rows - r0);
    for (std::uint64_t i = 0; i < h; ++i)
      for (std::uint64_t c = 0; c < m.shape.cols; ++c)
        gt::pattern_bytes(r0 + i, c, seed, es, &buf[std::size_t((i * m.shape.cols + c) * es)]);
    sink->write(r0, 0, h, m.shape.cols, buf.data(), m.shape.cols);
  }
  sink->commit();
  return 0;
}

int verify(const std::string& file, const gt::OpenOptions& open, bool transposed, std::uint64_t seed, bool quiet) {
  auto src = gt::open_source(file, open);
  const gt::MatrixInfo& m = src->info();
  const std::size_t es = m.elem_size;
  const std::uint64_t sr = stripe_rows(m);
  std::vector<unsigned char> buf(std::size_t(sr * m.shape.cols * es));
  std::uint64_t bad = 0;
  for (std::uint64_t r0 = 0; r0 < m.shape.rows; r0 += sr) {
    std::uint64_t h = std::min(sr, m.shape.rows - r0);
    src->read(r0, 0, h, m.shape.cols, buf.data(), m.shape.cols);
    for (std::uint64_t i = 0; i < h; ++i)
      for (std::uint64_t c = 0; c < m.shape.cols; ++c) {
        const std::uint64_t r = r0 + i;
        const void* p = &buf[std::size_t((i * m.shape.cols + c) * es)];
        bool ok = transposed ? gt::pattern_matches(p, c, r, seed, es) : gt::pattern_matches(p, r, c, seed, es);
        if (!ok && bad++ == 0)
          std::cerr << "gt-gen: " << file << ": first mismatch at (" << r << ", " << c << ")\n";
      }
  }
  if (bad) {
    std::cerr << "gt-gen: " << file << ": " << bad << " of " << m.shape.elems() << " elements differ from the pattern\n";
    return 1;
  }
  if (!quiet)
    std::cout << "gt-gen: " << src->describe() << ": all " << m.shape.elems() << " elements match the "
              << (transposed ? "transposed " : "") << "pattern (seed " << seed << ")\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gt-gen: write a pattern matrix in any format, or verify one (or its transpose)", "gt-gen"};
  std::string out, shape, dtype, verify_file;
  std::uint64_t seed = 1;
  bool force = false, transposed = false, quiet = false;
  app.add_option("OUT", out, "file to write (.h5[:/dataset], .npy, anything else raw)");
  app.add_option("--shape", shape, "ROWSxCOLS");
  app.add_option("--dtype", dtype, "element type (default f32 when writing): " + gt::dtype_names());
  app.add_option("--seed", seed, "pattern seed");
  app.add_flag("-f,--force", force, "replace an existing file");
  app.add_option("--verify", verify_file, "check FILE against the pattern instead of writing");
  app.add_flag("--transposed", transposed, "with --verify: FILE should be the transpose of the pattern");
  app.add_flag("-q,--quiet", quiet, "print only errors");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "gt-gen: " << e.what() << " (see gt-gen --help)\n";
    return 2;
  }
  try {
    const std::optional<gt::DType> t = gt::tool::dtype_option(dtype);
    gt::tool::install_cleanup_handlers();
    gt::tool::set_interrupt_message("\ngt-gen: interrupted: partial output removed");
    if (!verify_file.empty()) {
      // What the user said, and only that: a raw file needs both, and the
      // formats check either against a file that has its own header.
      gt::OpenOptions open;
      if (!shape.empty()) open.shape = gt::parse_shape(shape);
      open.dtype = t;
      return verify(verify_file, open, transposed, seed, quiet);
    }
    if (out.empty() || shape.empty())
      throw gt::Error(gt::ErrorKind::usage, "give OUT and --shape ROWSxCOLS (see gt-gen --help)");
    return generate(out, gt::parse_shape(shape), t.value_or(gt::DType::f32), seed, force);
  } catch (const gt::Error& e) {
    return gt::tool::fail("gt-gen", e);
  }
}
