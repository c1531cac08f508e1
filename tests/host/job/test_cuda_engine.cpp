// The CUDA streaming engine on files and host memory, bit-exact against the
// CPU engine and the position pattern: every format, out of place and in
// place, every element size, odd shapes, with budgets small enough that many
// tiles go through every stream; a stress loop for races in the ring; the
// out-of-memory path. Every test skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gtranspose/cuda.hpp"
#include "gtranspose/engine.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/memory.hpp"
#include "support/engines.hpp"
#include "support/gpu.hpp"
#include "support/mem_source.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

#if GT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gt {
namespace {

using test::info_of;
using test::MemSource;
using test::pattern_matrix;
using test::TempDir;
using test::transposed;

using test::dtype_for;

std::string ext_of(Format f) { return f == Format::raw ? ".raw" : f == Format::npy ? ".npy" : ".h5"; }

// Writes a rows x cols pattern matrix to `path` in format f (through the
// format's own sink, so headers and datasets are real).
std::vector<unsigned char> make_file(const std::string& path, std::uint64_t rows, std::uint64_t cols, std::size_t es,
                                     std::uint64_t seed) {
  auto m = pattern_matrix(rows, cols, es, seed);
  // A sink writes the transpose of its source's shape: give it a cols x rows source.
  MemSource shape_src(info_of({cols, rows}, dtype_for(es)), {});
  auto sink = create_sink(path, shape_src, SinkOptions{true});
  sink->write(0, 0, rows, cols, m.data(), cols);
  sink->commit();
  return m;
}

OpenOptions raw_opts(std::uint64_t rows, std::uint64_t cols, std::size_t es) {
  OpenOptions o;
  o.shape = Shape{rows, cols};
  o.dtype = dtype_for(es);
  return o;
}

std::vector<unsigned char> read_all(const std::string& path, const OpenOptions& o) {
  auto src = open_source(path, o);
  const auto& i = src->info();
  std::vector<unsigned char> v(i.bytes());
  src->read(0, 0, i.shape.rows, i.shape.cols, v.data(), i.shape.cols);
  return v;
}

RunReport run_cuda(Source& src, Sink& dst, const RunOptions& o) { return test::run_engine(EngineKind::cuda, src, dst, o); }
RunReport run_cpu(Source& src, Sink& dst, const RunOptions& o) { return test::run_engine(EngineKind::cpu, src, dst, o); }
RunReport run_cuda_inplace(InplaceMatrix& m, const RunOptions& o, InplaceWriter* w = nullptr) {
  return test::run_engine_inplace(EngineKind::cuda, m, o, w);
}

RunOptions small_budget(std::uint64_t dev, std::uint64_t host, int streams) {
  RunOptions o;
  o.device_mem = dev;
  o.host_mem = host;
  o.streams = streams;
  return o;
}

struct FileCase {
  Format format;
  std::size_t es;
  std::uint64_t rows, cols;
};

std::string name_of(const FileCase& c) {
  return std::string(format_name(c.format)) + "_e" + std::to_string(c.es) + "_" + std::to_string(c.rows) + "x" +
         std::to_string(c.cols);
}

// gtest names a parameter it cannot print by a dump of its bytes, padding
// included, which changed the ctest names from one build to the next.
void PrintTo(const FileCase& c, std::ostream* os) { *os << name_of(c); }

class StreamFiles : public ::testing::TestWithParam<FileCase> {};
class StreamFilesInPlace : public ::testing::TestWithParam<FileCase> {};

TEST_P(StreamFiles, OutOfPlaceMatchesCpuEngine) {
  GT_SKIP_WITHOUT_GPU();
  const FileCase c = GetParam();
  TempDir dir;
  const std::string in = dir / ("in" + ext_of(c.format)), out = dir / ("out" + ext_of(c.format)),
                    ref = dir / ("ref" + ext_of(c.format));
  const auto m = make_file(in, c.rows, c.cols, c.es, 7);
  const OpenOptions oin = raw_opts(c.rows, c.cols, c.es), oout = raw_opts(c.cols, c.rows, c.es);
  // A device budget of a few KiB per lane: many tiles, every lane used.
  const std::uint64_t bytes = c.rows * c.cols * c.es;
  const RunOptions ro = small_budget(std::max<std::uint64_t>(bytes / 3, 4096), std::max<std::uint64_t>(bytes / 2, 8192), 3);
  {
    auto src = open_source(in, oin);
    auto dst = create_sink(out, *src, {});
    RunReport r = run_cuda(*src, *dst, ro);
    dst->commit();
    EXPECT_EQ(r.engine, "cuda");
    EXPECT_LE(r.device_mem_peak, ro.device_mem);
    if (bytes >= 4096) {
      EXPECT_GT(r.tiles, 2u) << "the budget should force several tiles";
    }
  }
  {
    auto src = open_source(in, oin);
    auto dst = create_sink(ref, *src, {});
    RunOptions cpu = ro;  // the CPU engine refuses GPU options
    cpu.device_mem = 0;
    cpu.streams = 0;
    run_cpu(*src, *dst, cpu);
    dst->commit();
  }
  const auto got = read_all(out, oout);
  EXPECT_TRUE(got == transposed(m, c.rows, c.cols, c.es)) << "cuda output differs from the transpose";
  EXPECT_TRUE(got == read_all(ref, oout)) << "cuda and cpu engines differ";
}

TEST_P(StreamFilesInPlace, WithJournal) {
  GT_SKIP_WITHOUT_GPU();
  const FileCase c = GetParam();
  TempDir dir;
  const std::string path = dir / ("sq" + ext_of(c.format));
  const auto m = make_file(path, c.rows, c.cols, c.es, 11);
  const OpenOptions o = raw_opts(c.rows, c.cols, c.es);
  const std::uint64_t bytes = c.rows * c.cols * c.es;
  RunOptions ro = small_budget(std::max<std::uint64_t>(bytes / 4, 8192), std::max<std::uint64_t>(bytes / 3, 8192), 2);
  {
    auto im = open_inplace(path, o);
    auto journal = open_inplace_journal(*im, dir / ("sq" + ext_of(c.format)), ResumeMode::fresh);
    RunReport r = run_cuda_inplace(*im, ro, journal.get());
    EXPECT_EQ(r.mode, "in-place");
  }
  EXPECT_FALSE(std::filesystem::exists(journal_path(path))) << "the journal must be gone after a complete run";
  EXPECT_TRUE(read_all(path, o) == transposed(m, c.rows, c.cols, c.es));
}

std::vector<FileCase> file_cases() {
  std::vector<FileCase> v;
  for (Format f : {Format::raw, Format::npy, Format::hdf5})
    for (std::size_t es : {1, 2, 4, 8, 16}) {
      v.push_back({f, es, 129, 67});
      v.push_back({f, es, 97, 97});
    }
  for (std::size_t es : {1, 4, 16}) {
    v.push_back({Format::raw, es, 1, 1});
    v.push_back({Format::raw, es, 1, 1000});
    v.push_back({Format::raw, es, 1000, 1});
    v.push_back({Format::raw, es, 257, 131});
    v.push_back({Format::raw, es, 1023, 1025});
    v.push_back({Format::raw, es, 1025, 1025});
    v.push_back({Format::npy, es, 333, 333});
  }
  return v;
}

std::string case_name(const ::testing::TestParamInfo<FileCase>& i) { return name_of(i.param); }

std::vector<FileCase> square_cases() {
  std::vector<FileCase> v;
  for (const FileCase& c : file_cases())
    if (c.rows == c.cols) v.push_back(c);
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, StreamFiles, ::testing::ValuesIn(file_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(All, StreamFilesInPlace, ::testing::ValuesIn(square_cases()), case_name);

// Host memory through the engine: pinned (direct DMA) and pageable (staged).
TEST(StreamMemory, PinnedAndPageableEveryElementSize) {
  GT_SKIP_WITHOUT_GPU();
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (int pin = 0; pin < 4; ++pin) {
      const std::uint64_t R = 515, C = 301;
      const auto m = pattern_matrix(R, C, es, 5 + es);
      PinnedHostBuffer pin_in(m.size()), pin_out(m.size());
      std::vector<unsigned char> page_in(m), page_out(m.size(), 0xA5);
      unsigned char* in = (pin & 1) ? static_cast<unsigned char*>(pin_in.data()) : page_in.data();
      unsigned char* out = (pin & 2) ? static_cast<unsigned char*>(pin_out.data()) : page_out.data();
      std::copy(m.begin(), m.end(), in);
      std::fill(out, out + m.size(), 0xA5);
      auto src = memory_source(HostMatrix{in, {R, C}, es, 0, (pin & 1) ? HostMemoryKind::pinned : HostMemoryKind::pageable});
      auto dst = memory_sink(HostMatrix{out, {C, R}, es, 0, (pin & 2) ? HostMemoryKind::pinned : HostMemoryKind::pageable});
      RunReport r = run_cuda(*src, *dst, small_budget(64 << 10, 256 << 10, 4));
      EXPECT_GT(r.tiles, 4u);
      EXPECT_TRUE(std::equal(out, out + m.size(), transposed(m, R, C, es).begin()))
          << "element size " << es << ", pinned mask " << pin;
    }
}

// Tiles of several MiB in pageable memory: each reader's and writer's copy
// team splits them into bands (plan.hpp: kStagingTeam, kTeamBandBytes), so
// band seams and odd band heights go through the GPU too.
TEST(StreamMemory, PageableTilesSplitByCopyTeams) {
  GT_SKIP_WITHOUT_GPU();
  for (std::size_t es : {1, 2, 4, 8, 16}) {
    const std::uint64_t R = 4099, C = (std::uint64_t(48) << 20) / es / R + 7;
    const auto m = pattern_matrix(R, C, es, 3 + es);
    std::vector<unsigned char> out(m.size(), 0xA5);
    auto src = memory_source(HostMatrix{const_cast<unsigned char*>(m.data()), {R, C}, es, 0, HostMemoryKind::pageable});
    auto dst = memory_sink(HostMatrix{out.data(), {C, R}, es, 0, HostMemoryKind::pageable});
    RunReport r = run_cuda(*src, *dst, small_budget(64 << 20, 256 << 20, 4));
    EXPECT_GT(r.tiles, 4u);
    EXPECT_EQ(r.plan.read_team, kStagingTeam);
    EXPECT_EQ(r.plan.write_team, kStagingTeam);
    EXPECT_GE(r.tile_shape.rows * r.tile_shape.cols * es, 4 * kTeamBandBytes) << "tiles too small to split";
    EXPECT_TRUE(out == transposed(m, R, C, es)) << "element size " << es;
  }
}

TEST(StreamMemory, InPlacePinnedAndPageable) {
  GT_SKIP_WITHOUT_GPU();
  for (std::size_t es : {1, 4, 16})
    for (bool pinned : {false, true}) {
      const std::uint64_t n = 301;
      const auto m = pattern_matrix(n, n, es, 9);
      PinnedHostBuffer pb(m.size());
      std::vector<unsigned char> vb(m);
      unsigned char* p = pinned ? static_cast<unsigned char*>(pb.data()) : vb.data();
      std::copy(m.begin(), m.end(), p);
      auto im = memory_inplace(HostMatrix{p, {n, n}, es, 0, pinned ? HostMemoryKind::pinned : HostMemoryKind::pageable});
      RunReport r = run_cuda_inplace(*im, small_budget(96 << 10, 128 << 10, 3));
      EXPECT_GT(r.tiles, 4u);
      EXPECT_TRUE(std::equal(p, p + m.size(), transposed(m, n, n, es).begin())) << "es " << es << " pinned " << pinned;
    }
}

// Many tiny tiles, few buffers, many streams, repeated: a race in the ring
// shows up as a wrong element that moves from run to run.
TEST(StreamStress, TinyTilesManyStreams) {
  GT_SKIP_WITHOUT_GPU();
  TempDir dir;
  const std::uint64_t R = 700, C = 900;
  const std::size_t es = 4;
  const auto m = make_file(dir / "in.raw", R, C, es, 3);
  const auto want = transposed(m, R, C, es);
  std::mt19937 rng(1);
  for (int trial = 0; trial < 12; ++trial) {
    const int streams = 1 + int(rng() % 8);
    const std::uint64_t dev = 4096u << (rng() % 5), host = 4096u << (rng() % 4);
    auto src = open_source(dir / "in.raw", raw_opts(R, C, es));
    auto dst = create_sink(dir / "out.raw", *src, SinkOptions{true});
    RunReport r = run_cuda(*src, *dst, small_budget(dev, host, streams));
    dst->commit();
    ASSERT_TRUE(read_all(dir / "out.raw", raw_opts(C, R, es)) == want)
        << "trial " << trial << ": streams " << streams << ", device " << dev << ", host " << host << ", tiles "
        << r.tiles;
  }
}

#if GT_HAVE_CUDA
// With most of the GPU taken by someone else, the engine shrinks its tiles
// and says so instead of failing. It takes the whole GPU, which fails any
// GPU test running beside it, so it runs only when asked to
// (GT_TEST_GPU_EXCLUSIVE=1): scripts/gpu-check.sh runs it alone after the
// parallel tests.
TEST(StreamOom, ShrinksTilesWhenTheGpuIsFull) {
  GT_SKIP_WITHOUT_GPU();
  const char* exclusive = std::getenv("GT_TEST_GPU_EXCLUSIVE");
  if (!exclusive || std::string(exclusive) != "1")
    GTEST_SKIP() << "takes the whole GPU: run alone with GT_TEST_GPU_EXCLUSIVE=1 (scripts/gpu-check.sh host does)";
  std::size_t free_b = 0, total_b = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
  void* hog = nullptr;
  // 24 MiB left for the engine: two lanes of two 8 MiB tiles (the staging
  // tiles of a machine whose L3 holds the slots, plan_cache_staging) or of
  // 64 MiB ones (elsewhere) do not fit; 4 MiB ones do.
  const std::size_t leave = std::size_t(24) << 20;
  ASSERT_EQ(cudaMalloc(&hog, free_b - leave), cudaSuccess);
  const std::uint64_t n = 4096;  // 64 MiB of f32
  std::vector<unsigned char> m = pattern_matrix(n, n, 4, 2), out(m.size());
  auto src = memory_source(HostMatrix{m.data(), {n, n}, 4, 0, HostMemoryKind::pageable});
  auto dst = memory_sink(HostMatrix{out.data(), {n, n}, 4, 0, HostMemoryKind::pageable});
  RunOptions ro = small_budget(std::uint64_t(2) << 30, std::uint64_t(1) << 30, 2);
  RunReport r;
  EXPECT_NO_THROW(r = run_cuda(*src, *dst, ro));
  cudaFree(hog);
  bool noted = false;
  for (const auto& note : r.notes) noted |= note.find("shrunk") != std::string::npos;
  EXPECT_TRUE(noted) << "the report should say the tiles were shrunk";
  EXPECT_TRUE(out == transposed(m, n, n, 4));
}
#endif

TEST(StreamErrors, NoDeviceIsAClearError) {
  GT_SKIP_WITH_GPU("the no-device path cannot be reached");
  std::vector<unsigned char> m(16), out(16);
  auto src = memory_source(HostMatrix{m.data(), {2, 2}, 4, 0, HostMemoryKind::unchecked});
  auto dst = memory_sink(HostMatrix{out.data(), {2, 2}, 4, 0, HostMemoryKind::unchecked});
  try {
    run_cuda(*src, *dst, {});
    FAIL() << "the CUDA engine without a GPU must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::no_device);
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gt
