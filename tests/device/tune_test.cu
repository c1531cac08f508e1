// Timing harness for tuning the kernels on a GPU, before (and beside) the
// CLI's --bench: CUDA events around each repetition, warm-up first, median
// of the repetitions, next to a cudaMemcpyAsync device-to-device copy of the
// same bytes timed in the same process. Each kernel's result is checked on
// the device once before it is timed. Disabled by default; run with
//   gt_device_tests --gtest_also_run_disabled_tests --gtest_filter='DISABLED_Tune.*'
// Environment: GT_TUNE_SIZES="1,2,4,8,16", GT_TUNE_KERNELS="padded,copy" (all
// but the serial kernels when unset), GT_TUNE_VARIANTS=0 to skip the tuning
// variants (Rect: =1 to run them), GT_TUNE_VARIANT_MATCH="no-narrow" (only the
// variants whose name holds it; "a|b" either), GT_TUNE_REPS (default 20), and for Rect
// GT_TUNE_SHAPES="50000000x3,16384x16384" (rows x cols; default its five shapes).
// Out of place, GT_TUNE_ROTATE=1 runs each launch on the next of several
// buffer pairs, as many as --bench takes (gt::bench::rotation_buffers),
// and GT_TUNE_BATCH=N times N launches per event pair: without them a
// matrix of a few MB runs partly from L2 and an event pair's own
// microseconds count against it (run 222: f64's element tiles ranked one way
// here and the other way in the bench).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "device/device_util.cuh"
#include "gtranspose/error.hpp"
#include "gtranspose/kernel_tuning.hpp"
#include "gtranspose/kernels.hpp"

namespace {

using gt::kernels::Kind;
using gt::kernels::Problem;

std::vector<std::string> env_list(const char* name, const char* def) {
  const char* e = std::getenv(name);
  std::string s = e && *e ? e : def;
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int env_int(const char* name, int def) {
  const char* e = std::getenv(name);
  return e && *e ? std::atoi(e) : def;
}

struct Timing {
  double median_ms = 0, min_ms = 0;
  std::string error;
};

// Times `run` (which enqueues on `s`) with a pair of events per repetition
// around `batch` launches (the time of one: the pair's over batch).
Timing time_it(const std::function<void()>& run, cudaStream_t s, int reps, int batch = 1) {
  Timing t;
  try {
    for (int i = 0; i < 3 * batch; ++i) run();
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto& e : ev) cudaEventCreate(&e);
    for (int i = 0; i < reps; ++i) {
      cudaEventRecord(ev[2 * i], s);
      for (int j = 0; j < batch; ++j) run();
      cudaEventRecord(ev[2 * i + 1], s);
    }
    cudaError_t err = cudaStreamSynchronize(s);
    std::vector<double> ms(reps);
    for (int i = 0; i < reps; ++i) {
      float f = 0;
      cudaEventElapsedTime(&f, ev[2 * i], ev[2 * i + 1]);
      ms[i] = f / batch;
    }
    for (auto& e : ev) cudaEventDestroy(e);
    if (err != cudaSuccess) t.error = cudaGetErrorString(err);
    t.median_ms = gt::bench::median(ms);
    t.min_ms = *std::min_element(ms.begin(), ms.end());
  } catch (const gt::Error& e) {
    t.error = e.what();
  }
  return t;
}

struct Row {
  std::string name, shape, note;
  std::size_t elem;
  Timing t;
  double gbps = 0, pct = 0;
  bool verified = false;
};

void print_row(const Row& r) {
  std::printf("TUNE %-44s e%-2zu %-16s %9.4f ms %9.4f ms %8.1f GB/s %6.1f%% %s %s\n", r.name.c_str(), r.elem,
              r.shape.c_str(), r.t.median_ms, r.t.min_ms, r.gbps, r.pct, r.verified ? "ok" : "UNVERIFIED",
              (r.note + r.t.error).c_str());
  std::fflush(stdout);
}

std::string shape_str(std::uint64_t r, std::uint64_t c) { return std::to_string(r) + "x" + std::to_string(c); }

// GT_TUNE_VARIANT_MATCH: substrings separated by '|', any of which picks a
// variant (empty: every variant).
bool picked(const std::string& name, const std::string& match) {
  std::size_t at = 0;
  do {
    const std::size_t bar = match.find('|', at);
    const std::string part = match.substr(at, bar == std::string::npos ? std::string::npos : bar - at);
    if (name.find(part) != std::string::npos) return true;
    at = bar == std::string::npos ? bar : bar + 1;
  } while (at != std::string::npos);
  return false;
}

bool wanted(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// One out-of-place matrix: memcpy reference, then each kernel and variant.
void tune_out_of_place(std::uint64_t rows, std::uint64_t cols, std::size_t s, const std::vector<std::string>& kernels,
                       bool variants, int reps) {
  const char* match_env = std::getenv("GT_TUNE_VARIANT_MATCH");
  const std::string match = match_env ? match_env : "";
  const std::uint64_t bytes = rows * cols * s;
  const std::uint64_t pairs = env_int("GT_TUNE_ROTATE", 0) ? gt::bench::rotation_buffers(bytes) : 1;
  const int batch = std::max(1, env_int("GT_TUNE_BATCH", 1));
  gtt::DeviceBuffer in(bytes * pairs), out(bytes * pairs);
  ASSERT_TRUE(in.ok() && out.ok()) << "cudaMalloc of 2 x " << bytes * pairs << " bytes failed";
  const std::uint64_t seed = 12345;
  for (std::uint64_t k = 0; k < pairs; ++k) ASSERT_EQ(gtt::fill(in.get() + k * bytes, s, rows, cols, cols, seed, 0), "");
  GTT_CUDA(cudaDeviceSynchronize());
  cudaStream_t st;
  GTT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const std::string shape = shape_str(rows, cols);
  std::uint64_t turn = 0;  // the pair the next timed launch takes
  const auto next = [&] {
    const std::uint64_t k = turn++ % pairs;
    return std::make_pair(in.get() + k * bytes, out.get() + k * bytes);
  };

  Row ref{"memcpy-d2d", shape, pairs > 1 ? std::to_string(pairs) + " pairs " : "", s};
  ref.t = time_it([&] {
    const auto [i, o] = next();
    cudaMemcpyAsync(o, i, bytes, cudaMemcpyDeviceToDevice, st);
  }, st, reps, batch);
  ref.gbps = 2.0 * bytes / (ref.t.median_ms * 1e6);
  ref.pct = 100;
  ref.verified = true;
  print_row(ref);

  Problem p;
  p.rows = rows;
  p.cols = cols;
  p.elem_size = s;
  auto one = [&](const std::string& name, Kind kind, void (*launch)(const void*, void*, const Problem&, cudaStream_t)) {
    Row r{name, shape, "", s};
    cudaMemset(out.get(), gtt::kPoison, bytes);
    cudaDeviceSynchronize();
    try {
      launch(in.get(), out.get(), p, st);
      cudaStreamSynchronize(st);
      const bool copy = kind == Kind::copy;
      const gtt::Check c = gtt::verify(out.get(), s, copy ? rows : cols, copy ? cols : rows, copy ? cols : rows, seed,
                                       !copy, gtt::kPoison);
      r.verified = c.error.empty() && c.count == 0;
      if (!r.verified) r.note = "mismatch at (" + std::to_string(c.row) + "," + std::to_string(c.col) + ") ";
    } catch (const gt::Error& e) {
      r.note = e.what();
      print_row(r);
      return;
    }
    r.t = time_it([&] {
      const auto [i, o] = next();
      launch(i, o, p, st);
    }, st, reps, batch);
    r.gbps = 2.0 * bytes / (r.t.median_ms * 1e6);
    r.pct = 100.0 * r.gbps / ref.gbps;
    print_row(r);
  };
  for (const auto& k : gt::kernels::registry()) {
    if (k.kind == Kind::inplace || !wanted(kernels, k.name)) continue;
    std::string why;
    if (!k.supports(p, &why)) {
      std::printf("TUNE %-44s e%-2zu %-16s skipped: %s\n", k.name, s, shape.c_str(), why.c_str());
      continue;
    }
    one(k.name, k.kind, k.launch);
  }
  if (variants && wanted(kernels, "padded"))
    for (const auto& v : gt::kernels::tuning_variants("padded", s))
      if (!v.is_default && picked(v.name, match)) one(v.name, Kind::transpose, v.launch);
  cudaStreamDestroy(st);
}

// The 1 GiB matrices of the targets: 16384 rows, 2^30 / (16384 * S) columns.
TEST(DISABLED_Tune, Catalogue) {
  GT_SKIP_WITHOUT_GPU();
  std::vector<std::string> def;
  for (const auto& k : gt::kernels::registry())
    if (k.kind != Kind::inplace && std::string(k.name) != "single-thread" && std::string(k.name) != "row-per-thread")
      def.push_back(k.name);
  std::string joined;
  for (const auto& d : def) joined += d + ",";
  const auto kernels = env_list("GT_TUNE_KERNELS", joined.c_str());
  const bool variants = env_int("GT_TUNE_VARIANTS", 1) != 0;
  const int reps = env_int("GT_TUNE_REPS", 20);
  for (const auto& ss : env_list("GT_TUNE_SIZES", "1,2,4,8,16")) {
    const std::size_t s = std::stoul(ss);
    tune_out_of_place(16384, (1ull << 30) / (16384 * s), s, kernels, variants, reps);
  }
}

// Rectangular and skinny shapes (the element count of 16384^2, or 150e6
// elements for the skinny ones), padded against the copy.
TEST(DISABLED_Tune, Rect) {
  GT_SKIP_WITHOUT_GPU();
  const auto kernels = env_list("GT_TUNE_KERNELS", "padded");
  const int reps = env_int("GT_TUNE_REPS", 20);
  const bool variants = env_int("GT_TUNE_VARIANTS", 0) != 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> shapes;
  for (const auto& sh : env_list("GT_TUNE_SHAPES", "16384x16384,8192x32768,32768x8192,3x50000000,50000000x3")) {
    const auto x = sh.find('x');
    ASSERT_NE(x, std::string::npos) << "GT_TUNE_SHAPES: " << sh << " is not ROWSxCOLS";
    shapes.emplace_back(std::stoull(sh.substr(0, x)), std::stoull(sh.substr(x + 1)));
  }
  for (const auto& ss : env_list("GT_TUNE_SIZES", "1,2,4,8,16")) {
    const std::size_t s = std::stoul(ss);
    for (const auto& sh : shapes) tune_out_of_place(sh.first, sh.second, s, kernels, variants, reps);
  }
}

// One square in place against a copy of the same bytes. Each timed run
// transposes the result of the previous one.
void tune_inplace(std::uint64_t n, std::size_t s, const std::vector<std::string>& kernels, bool variants, int reps) {
  const char* match_env = std::getenv("GT_TUNE_VARIANT_MATCH");
  const std::string match = match_env ? match_env : "";
  const std::uint64_t bytes = n * n * s;
  gtt::DeviceBuffer a(bytes), b(bytes);
  ASSERT_TRUE(a.ok() && b.ok());
  cudaStream_t st;
  GTT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const std::string shape = shape_str(n, n);
  Row ref{"memcpy-d2d", shape, "", s};
  ref.t = time_it([&] { cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, st); }, st, reps);
  ref.gbps = 2.0 * bytes / (ref.t.median_ms * 1e6);
  ref.pct = 100;
  ref.verified = true;
  print_row(ref);
  Problem p;
  p.rows = p.cols = n;
  p.elem_size = s;
  auto one = [&](const std::string& name, void (*launch)(const void*, void*, const Problem&, cudaStream_t)) {
    Row r{name, shape, "", s};
    const std::uint64_t seed = 777;
    const bool filled = gtt::fill(a.get(), s, n, n, n, seed, 0).empty() && cudaDeviceSynchronize() == cudaSuccess;
    try {
      launch(a.get(), nullptr, p, st);
      cudaStreamSynchronize(st);
      const gtt::Check c = gtt::verify(a.get(), s, n, n, n, seed, true, 0);
      r.verified = filled && c.error.empty() && c.count == 0;
      if (!r.verified) r.note = "mismatch at (" + std::to_string(c.row) + "," + std::to_string(c.col) + ") ";
    } catch (const gt::Error& err) {
      r.note = err.what();
      print_row(r);
      return;
    }
    r.t = time_it([&] { launch(a.get(), nullptr, p, st); }, st, reps);
    r.gbps = 2.0 * bytes / (r.t.median_ms * 1e6);
    r.pct = 100.0 * r.gbps / ref.gbps;
    print_row(r);
  };
  for (const auto& k : gt::kernels::registry())
    if (k.kind == Kind::inplace && wanted(kernels, k.name)) one(k.name, k.launch);
  if (variants && wanted(kernels, "inplace-tiled"))
    for (const auto& v : gt::kernels::tuning_variants("inplace-tiled", s))
      if (!v.is_default && picked(v.name, match)) one(v.name, v.launch);
  cudaStreamDestroy(st);
}

// Squares of about 1 GiB per element size (sqrt(2^30 / S) rounded down to a
// multiple of 128), and the same plus one: rows not 16-byte aligned, the
// misaligned tile path (its variants too when GT_TUNE_VARIANT_MATCH picks
// them, e.g. "no-misaligned" for the element kernel beside it).
TEST(DISABLED_Tune, Inplace) {
  GT_SKIP_WITHOUT_GPU();
  const auto kernels = env_list("GT_TUNE_KERNELS", "inplace-swap,inplace-tiled");
  const bool variants = env_int("GT_TUNE_VARIANTS", 1) != 0;
  const int reps = env_int("GT_TUNE_REPS", 20);
  for (const auto& ss : env_list("GT_TUNE_SIZES", "1,2,4,8,16")) {
    const std::size_t s = std::stoul(ss);
    const std::uint64_t n = s == 1 ? 32768 : s == 2 ? 23168 : s == 4 ? 16384 : s == 8 ? 11584 : 8192;
    const auto sides = env_list("GT_TUNE_INPLACE_N", "");  // other sides instead, e.g. "16388,16385"
    if (!sides.empty()) {
      for (const auto& side : sides) tune_inplace(std::stoull(side), s, kernels, variants, reps);
      continue;
    }
    tune_inplace(n, s, kernels, variants, reps);
    tune_inplace(n + 1, s, kernels, variants && std::getenv("GT_TUNE_VARIANT_MATCH"), reps);
  }
}

// inplace-rect, each step alone (GT_TEST_RECT_STEPS: 1 rotation, 2 rows, 4
// columns, 8 the blocked route's tiles, 16 its cycles; 31 all) at band widths
// GT_RECT_BAND_LIST (bytes per row; default 0: each step's own), beside the copy of the same
// bytes. GT_TUNE_SHAPES="e4:16383x16385,..." (element size: shape);
// GT_TUNE_RECT_SWITCHES="-,GT_TEST_RECT_POW2_ROTATION" runs each band width
// again with each test switch set ("-": none), in the same process. The full
// run is verified once per band width and switch; the steps alone are only timed.
TEST(DISABLED_Tune, RectSteps) {
  GT_SKIP_WITHOUT_GPU();
  const gt::kernels::KernelInfo* k = gt::kernels::find("inplace-rect");
  ASSERT_NE(k, nullptr);
  const int reps = env_int("GT_TUNE_REPS", 10);
  cudaStream_t st;
  GTT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (const auto& spec : env_list("GT_TUNE_SHAPES", "e4:16383x16385,e4:13001x20651,e4:20651x13001,e1:13001x20651,"
                                                      "e8:13001x10325,e4:12345x6789,e4:1000x300007,e4:300007x1000,"
                                                      "e4:32768x16384,e4:12000x18000")) {
    const std::size_t es = std::stoul(spec.substr(1, spec.find(':') - 1));
    const std::string sh = spec.substr(spec.find(':') + 1);
    const std::uint64_t rows = std::stoull(sh.substr(0, sh.find('x'))), cols = std::stoull(sh.substr(sh.find('x') + 1));
    const std::uint64_t bytes = rows * cols * es;
    gtt::DeviceBuffer a(bytes), b(bytes);
    ASSERT_TRUE(a.ok() && b.ok());
    const Timing copy = time_it([&] { cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, st); }, st, reps);
    Problem p{rows, cols, es, 0, 0};
    // GT_TUNE_RECT_SWITCHES: test switches (GT_TEST_RECT_*) each run set to 1
    // beside the default ("-"), in one process.
    const auto switches = env_list("GT_TUNE_RECT_SWITCHES", "-"), bands = env_list("GT_RECT_BAND_LIST", "0");
    for (std::size_t run = 0; run < switches.size() * bands.size(); ++run) {
      const std::string& sw = switches[run / bands.size()];
      const std::string& band = bands[run % bands.size()];
      if (sw != "-") setenv(sw.c_str(), "1", 1);
      if (band != "0")
        setenv("GT_TEST_RECT_BAND_BYTES", band.c_str(), 1);
      else
        unsetenv("GT_TEST_RECT_BAND_BYTES");
      const std::uint64_t seed = gtt::test_seed("RectSteps" + spec);
      ASSERT_EQ(gtt::fill(a.get(), es, rows, cols, cols, seed, gtt::kPadIn), "");
      GTT_CUDA(cudaDeviceSynchronize());
      k->launch(a.get(), nullptr, p, st);
      GTT_CUDA(cudaStreamSynchronize(st));
      const gtt::Check res = gtt::verify(a.get(), es, cols, rows, rows, seed, true, gtt::kPadIn);
      for (const char* steps : {"31", "1", "2", "4", "8", "16"}) {
        setenv("GT_TEST_RECT_STEPS", steps, 1);
        Row r;
        r.name = std::string("inplace-rect band ") + band + " steps " + steps + (sw != "-" ? " " + sw : "");
        r.shape = sh;
        r.elem = es;
        r.t = time_it([&] { k->launch(a.get(), nullptr, p, st); }, st, reps);
        r.gbps = r.t.median_ms > 0 ? 2.0 * double(bytes) / (r.t.median_ms * 1e-3) / 1e9 : 0;
        r.pct = r.t.median_ms > 0 ? copy.median_ms / r.t.median_ms * 100.0 : 0;
        r.verified = std::string(steps) == "31" && res.error.empty() && res.count == 0;
        r.note = "copy " + std::to_string(copy.median_ms) + " ms";
        print_row(r);
      }
      unsetenv("GT_TEST_RECT_STEPS");
      if (sw != "-") unsetenv(sw.c_str());
      EXPECT_EQ(res.count, 0u) << spec << " band " << band << (sw != "-" ? " " + sw : "");
    }
    unsetenv("GT_TEST_RECT_BAND_BYTES");
  }
  cudaStreamDestroy(st);
}

// What walking down a band costs, out of place (run 247):
// every row's segment of W bytes at band b copied to the same band of row
// perm(i) in another buffer, a warp a segment, eight segments a warp in
// flight, as inplace-rect's column permutation moves them (but with no
// shared memory, no barriers and no in-place constraint). Orders: the
// segments of one band down all rows, then the next band (band-major, the
// permutation's order), or row after row (row-major); perm the identity or
// a random permutation. f32 at GT_TUNE_SHAPES' first shape (13001x20651),
// % of a D2D copy of the same bytes in the same process; the random
// band-major case at 128 bytes is checked element by element on the host.
// Run 247 (H100), band-major / row-major (random perm): 64 B 24.4 / 31.8,
// 128 B 36.5 / 60.6, 256 B 53.3 / 97.6, 512 B 71.5 / 104.8: a walk down
// 128-byte bands costs this plain kernel 40% of row order's speed, where
// inplace-rect's permutation, which holds the band on chip between its
// loads and its writes, runs at 58-62%.
__global__ void band_move_kernel(const std::uint32_t* src, std::uint32_t* dst, std::uint64_t m, std::uint64_t n,
                                 unsigned w, const std::uint32_t* perm, bool band_major) {
  const std::uint64_t nb = (n + w - 1) / w, items = nb * m;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wpb = blockDim.x >> 5;
  constexpr int kDepth = 8;
  for (std::uint64_t it0 = (std::uint64_t(blockIdx.x) * wpb + warp) * kDepth; it0 < items;
       it0 += std::uint64_t(gridDim.x) * wpb * kDepth) {
    std::uint32_t v[kDepth][4];
    std::uint64_t to[kDepth], col[kDepth];
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      const std::uint64_t it = it0 + u;
      if (it >= items) break;
      const std::uint64_t b = band_major ? it / m : it % nb, i = band_major ? it % m : it / nb;
      col[u] = b * w;
      to[u] = std::uint64_t(perm[i]) * n;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const std::uint64_t j = col[u] + lane + 32 * k;
        if (lane + 32 * k < w && j < n) v[u][k] = src[i * n + j];
      }
    }
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      if (it0 + u >= items) break;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const std::uint64_t j = col[u] + lane + 32 * k;
        if (lane + 32 * k < w && j < n) dst[to[u] + j] = v[u][k];
      }
    }
  }
}

TEST(DISABLED_Tune, BandCeiling) {
  GT_SKIP_WITHOUT_GPU();
  const int reps = env_int("GT_TUNE_REPS", 10);
  const std::string sh = env_list("GT_TUNE_CEILING_SHAPE", "13001x20651")[0];
  const std::uint64_t m = std::stoull(sh.substr(0, sh.find('x'))), n = std::stoull(sh.substr(sh.find('x') + 1));
  const std::uint64_t bytes = m * n * 4;
  cudaStream_t st;
  GTT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  gtt::DeviceBuffer a(bytes), b(bytes), pid(m * 4), prnd(m * 4);
  ASSERT_TRUE(a.ok() && b.ok() && pid.ok() && prnd.ok());
  ASSERT_EQ(gtt::fill(a.get(), 4, m, n, n, 7, gtt::kPadIn), "");
  std::vector<std::uint32_t> id(m), rnd(m);
  for (std::uint64_t i = 0; i < m; ++i) id[i] = rnd[i] = std::uint32_t(i);
  std::mt19937_64 rng(11);
  std::shuffle(rnd.begin(), rnd.end(), rng);
  GTT_CUDA(cudaMemcpy(pid.get(), id.data(), m * 4, cudaMemcpyHostToDevice));
  GTT_CUDA(cudaMemcpy(prnd.get(), rnd.data(), m * 4, cudaMemcpyHostToDevice));
  const Timing copy = time_it([&] { cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, st); }, st, reps);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const auto* src = reinterpret_cast<const std::uint32_t*>(a.get());
  auto* dst = reinterpret_cast<std::uint32_t*>(b.get());
  for (unsigned wb : {64u, 128u, 256u, 512u})
    for (int order = 0; order < 3; ++order) {
      const bool band_major = order < 2;
      const auto* perm = reinterpret_cast<const std::uint32_t*>(order == 0 ? pid.get() : prnd.get());
      const unsigned w = wb / 4;
      auto run = [&] { band_move_kernel<<<unsigned(sms) * 8, 256, 0, st>>>(src, dst, m, n, w, perm, band_major); };
      Row r;
      r.name = std::string("band ceiling ") + std::to_string(wb) + " B " +
               (order == 0 ? "band-major identity" : order == 1 ? "band-major random" : "row-major random");
      r.shape = sh;
      r.elem = 4;
      GTT_CUDA(cudaMemsetAsync(b.get(), 0xEE, bytes, st));
      run();
      GTT_CUDA(cudaStreamSynchronize(st));
      if (wb == 128 && order == 1) {
        std::vector<std::uint32_t> hs(m * n), hd(m * n);
        GTT_CUDA(cudaMemcpy(hs.data(), a.get(), bytes, cudaMemcpyDeviceToHost));
        GTT_CUDA(cudaMemcpy(hd.data(), b.get(), bytes, cudaMemcpyDeviceToHost));
        std::uint64_t bad = 0;
        for (std::uint64_t i = 0; i < m; ++i)
          bad += std::memcmp(&hs[i * n], &hd[std::uint64_t(rnd[i]) * n], n * 4) != 0;
        EXPECT_EQ(bad, 0u) << "rows moved wrong";
        r.verified = bad == 0;
      }
      r.t = time_it(run, st, reps);
      r.gbps = r.t.median_ms > 0 ? 2.0 * double(bytes) / (r.t.median_ms * 1e-3) / 1e9 : 0;
      r.pct = r.t.median_ms > 0 ? copy.median_ms / r.t.median_ms * 100.0 : 0;
      r.note = "copy " + std::to_string(copy.median_ms) + " ms";
      print_row(r);
    }
  cudaStreamDestroy(st);
}

}  // namespace
