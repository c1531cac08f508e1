// gt-gen: writes a matrix of any shape, dtype and format filled with the
// position pattern (pattern.hpp), and verifies files against it, so a
// transposed file of any size is checked without a copy of the input.
//
//   gt-gen OUT --shape RxC --dtype T [--seed S] [--force] [--values smooth]
//          [--chunk RxC --filters shuffle,gzip=4,fletcher32,zstd=3,lz4,blosc,szip]
//   gt-gen --verify FILE [--transposed] [--seed S] [--values smooth] [--shape RxC --dtype T for raw]
//   gt-gen --bench-codecs FILE.h5 [--threads N]   a chunked dataset's own codecs
//          on 1 and N threads, in memory (codec_bench.hpp): the reference
//          "one core's rate times the cores" for compressed HDF5 runs
//
// --values pattern (the default) looks random: no codec shrinks it.
// --values smooth is what a compressor meets in real data: element (r, c)
// is a float rounded to 3 decimals that changes slowly along rows and
// columns (integers and other types get the same number as an integer),
// still a function of (r, c, seed) alone, so it verifies by position too.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <iostream>
#include <vector>

#include "common.hpp"
#include "gtranspose/codec_bench.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/pattern.hpp"
#include "gtranspose/sizes.hpp"
#include "signals.hpp"

namespace {

enum class Values { pattern, smooth };

// The smooth value of (r, c) is q/1000: a slow ramp along rows and columns
// (the high bytes repeat, as in measured data) plus up to 2.047 of noise
// from a hash of (r, c, seed) (the low bytes do not). Shuffle+deflate at
// level 4 stores f32 of it at about 2:1, as it does real detector and
// simulation data, rather than the 15:1 of a noiseless ramp.
std::uint64_t smooth_q(std::uint64_t r, std::uint64_t c, std::uint64_t seed) {
  return ((r * 7 + c * 3) * 16 + (gt::mix64(r * 0x9E3779B97F4A7C15ull ^ c ^ (seed << 40)) & 2047)) % 10000019;
}

void value_bytes(Values v, gt::DType t, std::uint64_t r, std::uint64_t c, std::uint64_t seed, std::size_t es,
                 unsigned char* dst) {
  if (v == Values::pattern) return gt::pattern_bytes(r, c, seed, es, dst);
  const std::uint64_t q = smooth_q(r, c, seed);
  if (t == gt::DType::f32 || t == gt::DType::c64) {
    const float f = float(double(q) / 1000.0);
    std::memcpy(dst, &f, 4);
    if (es == 8) std::memcpy(dst + 4, &f, 4);
    return;
  }
  if (t == gt::DType::f64 || t == gt::DType::c128) {
    const double d = double(q) / 1000.0;
    std::memcpy(dst, &d, 8);
    if (es == 16) std::memcpy(dst + 8, &d, 8);
    return;
  }
  for (std::size_t i = 0; i < es; ++i) dst[i] = static_cast<unsigned char>(i < 8 ? q >> (8 * i) : 0);
}

bool value_matches(Values v, gt::DType t, const void* p, std::uint64_t r, std::uint64_t c, std::uint64_t seed,
                   std::size_t es) {
  if (v == Values::pattern) return gt::pattern_matches(p, r, c, seed, es);
  unsigned char want[16];
  value_bytes(v, t, r, c, seed, es, want);
  return std::memcmp(p, want, es) == 0;
}

// "shuffle,gzip=4,fletcher32" -> HDF5 filters in that order.
std::vector<gt::Hdf5Filter> parse_filters(const std::string& text) {
  std::vector<gt::Hdf5Filter> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const bool has = eq != std::string::npos;
    const unsigned level = has ? unsigned(std::stoul(item.substr(eq + 1))) : 0;
    gt::Hdf5Filter f;
    if (name == "shuffle") f = {2, {}};
    else if (name == "gzip" || name == "deflate") f = {1, {has ? level : 4}};
    else if (name == "fletcher32") f = {3, {}, false};
    else if (name == "szip") f = {4, {0x20 /* nearest neighbour */, has ? level : 16}};
    else if (name == "zstd") f = {32015, {has ? level : 3}};
    else if (name == "lz4") f = {32004, {0}};
    else if (name == "blosc") f = {32001, {0, 0, 0, 0, has ? level : 5, 1, 1 /* lz4 */}};
    else
      throw gt::Error(gt::ErrorKind::usage, "unknown filter '" + name +
                                                "' in --filters: use shuffle, gzip[=L], fletcher32, szip, zstd[=L], lz4, blosc[=L]");
    out.push_back(f);
  }
  return out;
}

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

int generate(const std::string& out, const gt::Shape& shape, gt::DType t, std::uint64_t seed, Values values,
             const gt::SinkOptions& so) {
  ShapeOnlySource desc(shape, t, out);
  auto sink = gt::create_sink(out, desc, so);
  const gt::MatrixInfo& m = sink->info();
  const std::size_t es = m.elem_size;
  const std::uint64_t sr = stripe_rows(m);
  std::vector<unsigned char> buf(std::size_t(sr * m.shape.cols * es));
  for (std::uint64_t r0 = 0; r0 < m.shape.rows; r0 += sr) {
    std::uint64_t h = std::min(sr, m.shape.rows - r0);
    for (std::uint64_t i = 0; i < h; ++i)
      for (std::uint64_t c = 0; c < m.shape.cols; ++c)
        value_bytes(values, t, r0 + i, c, seed, es, &buf[std::size_t((i * m.shape.cols + c) * es)]);
    sink->write(r0, 0, h, m.shape.cols, buf.data(), m.shape.cols);
  }
  sink->commit();
  return 0;
}

int verify(const std::string& file, const gt::OpenOptions& open, bool transposed, std::uint64_t seed, Values values,
           bool quiet) {
  auto src = gt::open_source(file, open);
  const gt::MatrixInfo& m = src->info();
  const gt::DType t = m.dtype.value_or(gt::DType::u8);
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
        bool ok = transposed ? value_matches(values, t, p, c, r, seed, es) : value_matches(values, t, p, r, c, seed, es);
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
  std::string out, shape, dtype, verify_file, values_name = "pattern", chunk, filters, bench_file;
  int threads = 0;
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
  app.add_option("--values", values_name, "pattern (random-looking, the default) or smooth (compressible)")
      ->check(CLI::IsMember({"pattern", "smooth"}));
  app.add_option("--chunk", chunk, "HDF5 output: chunked, chunks of ROWSxCOLS");
  app.add_option("--bench-codecs", bench_file,
                 "measure FILE.h5's own filter pipeline on its chunks in memory, on 1 and --threads threads; prints a "
                 "table and a JSON line");
  app.add_option("--threads", threads, "with --bench-codecs: threads of the second row (default: all cores)");
  app.add_option("--filters", filters,
                 "HDF5 output with --chunk: filters in order, e.g. shuffle,gzip=4 (also fletcher32, szip, zstd[=L], "
                 "lz4, blosc[=L])");
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
    const Values values = values_name == "smooth" ? Values::smooth : Values::pattern;
    gt::tool::install_cleanup_handlers();
    gt::tool::set_interrupt_message("\ngt-gen: interrupted: partial output removed");
    if (!bench_file.empty()) {
      // At most 2 GiB of stored chunks in memory: enough for a steady rate.
      const gt::CodecBench b = gt::bench_codecs(bench_file, threads, std::uint64_t(2) << 30);
      std::cout << gt::format_codec_bench(b) << "JSON " << gt::codec_bench_json(b) << "\n";
      return 0;
    }
    if (!verify_file.empty()) {
      // What the user said, and only that: a raw file needs both, and the
      // formats check either against a file that has its own header.
      gt::OpenOptions open;
      if (!shape.empty()) open.shape = gt::parse_shape(shape);
      open.dtype = t;
      return verify(verify_file, open, transposed, seed, values, quiet);
    }
    if (out.empty() || shape.empty())
      throw gt::Error(gt::ErrorKind::usage, "give OUT and --shape ROWSxCOLS (see gt-gen --help)");
    gt::SinkOptions so;
    so.force = force;
    if (!chunk.empty()) so.hdf5_chunk = gt::parse_shape(chunk);
    if (!filters.empty()) {
      if (chunk.empty()) throw gt::Error(gt::ErrorKind::usage, "--filters needs --chunk: HDF5 filters work on chunks");
      so.hdf5_filters = parse_filters(filters);
    }
    return generate(out, gt::parse_shape(shape), t.value_or(gt::DType::f32), seed, values, so);
  } catch (const gt::Error& e) {
    return gt::tool::fail("gt-gen", e);
  }
}
