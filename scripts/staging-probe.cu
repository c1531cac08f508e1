// The staging probe (issue 13; PERF.md run 108): how fast pageable host memory
// can reach the GPU on this machine. cudaHostRegister's cost and its scaling over
// threads and chunk sizes (transparent huge pages on and off), DMA from
// registered pages against cudaMallocHost, and staging copies (memcpy and
// streaming stores) alone and beside DMA both ways.
//   nvcc -O2 -std=c++17 -arch=sm_90 -Xcompiler -mavx2,-pthread scripts/staging-probe.cu -o /tmp/staging-probe
//   /tmp/staging-probe 4      # GiB per buffer
#include <cuda_runtime.h>
#include <immintrin.h>
#include <sys/mman.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); std::exit(1);} } while (0)
using clk = std::chrono::steady_clock;
static double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

static const size_t GiB = size_t(1) << 30, MiB = size_t(1) << 20;

static char* map(size_t bytes, bool huge) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { std::perror("mmap"); std::exit(1); }
  madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  return static_cast<char*>(p);
}

template <class F> static void par(int T, F f) {
  std::vector<std::thread> th;
  for (int t = 0; t < T; ++t) th.emplace_back(f, t);
  for (auto& x : th) x.join();
}

static void fill(char* p, size_t bytes, int T) {
  par(T, [&](int t) {
    size_t a = bytes / T * t, b = t == T - 1 ? bytes : bytes / T * (t + 1);
    unsigned long long x = 0x9E3779B97F4A7C15ull * (t + 1);
    for (size_t i = a; i + 8 <= b; i += 8) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; std::memcpy(p + i, &x, 8); }
  });
}

// Register [p, p+bytes) in chunks by T threads; returns seconds.
static double reg(char* p, size_t bytes, size_t chunk, int T, bool unreg) {
  std::atomic<size_t> next{0};
  auto t0 = clk::now();
  par(T, [&](int) {
    for (;;) {
      size_t off = next.fetch_add(chunk);
      if (off >= bytes) break;
      size_t n = std::min(chunk, bytes - off);
      if (unreg) CK(cudaHostUnregister(p + off)); else CK(cudaHostRegister(p + off, n, cudaHostRegisterDefault));
    }
  });
  return since(t0);
}

static void nt_copy(char* dst, const char* src, size_t n) {  // 32-byte aligned dst, n % 128 == 0
  for (size_t i = 0; i < n; i += 128) {
    __m256i a = _mm256_loadu_si256((const __m256i*)(src + i));
    __m256i b = _mm256_loadu_si256((const __m256i*)(src + i + 32));
    __m256i c = _mm256_loadu_si256((const __m256i*)(src + i + 64));
    __m256i d = _mm256_loadu_si256((const __m256i*)(src + i + 96));
    _mm256_stream_si256((__m256i*)(dst + i), a);
    _mm256_stream_si256((__m256i*)(dst + i + 32), b);
    _mm256_stream_si256((__m256i*)(dst + i + 64), c);
    _mm256_stream_si256((__m256i*)(dst + i + 96), d);
  }
}

// Copy a rows x W-byte block of src (pitch sp) into dst (pitch W), as a tile
// copy does: T threads, each whole 64 MiB tiles (rows of `row` bytes).
static double tile_copy(char* dst, const char* src, size_t bytes, size_t row, size_t pitch, int T, int mode) {
  // src is a matrix of `pitch`-byte rows; tiles are [rows_per_tile x row] blocks.
  const size_t tile = 64 * MiB, rows_per_tile = tile / row;
  const size_t nrows = bytes / pitch, ntc = pitch / row, ntr = nrows / rows_per_tile, ntiles = ntc * ntr;
  std::atomic<size_t> next{0};
  auto t0 = clk::now();
  par(T, [&](int) {
    for (;;) {
      size_t k = next.fetch_add(1);
      if (k >= ntiles) break;
      size_t tr = k / ntc, tc = k % ntc;
      const char* s = src + tr * rows_per_tile * pitch + tc * row;
      char* d = dst + k * tile;
      for (size_t r = 0; r < rows_per_tile; ++r) {
        if (mode == 0) std::memcpy(d + r * row, s + r * pitch, row);
        else nt_copy(d + r * row, s + r * pitch, row);
      }
      if (mode == 1) _mm_sfence();
    }
  });
  return since(t0);
}

int main(int argc, char** argv) {
  const size_t bytes = (argc > 1 ? std::atoll(argv[1]) : 4) * GiB;
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  const int hc = std::thread::hardware_concurrency();
  std::printf("bytes %zu GiB, %d cores\n", bytes / GiB, hc);

  for (int huge = 1; huge >= 0; --huge) {
    char* a = map(bytes, huge);
    auto t0 = clk::now();
    fill(a, bytes, hc);
    std::printf("\n[huge=%d] fill %.3f s\n", huge, since(t0));
    { // whole at once
      auto t = clk::now();
      CK(cudaHostRegister(a, bytes, cudaHostRegisterDefault));
      double r = since(t); t = clk::now();
      CK(cudaHostUnregister(a));
      std::printf("REG huge=%d whole: register %.3f s (%.1f GB/s), unregister %.3f s\n", huge, r, bytes / r / 1e9, since(t));
    }
    for (size_t chunk : {size_t(64) * MiB, size_t(256) * MiB, size_t(1) * GiB}) {
      for (int T : {1, 2, 4, 8, 16}) {
        if (chunk * T > bytes * 2 && T > 1) continue;
        double r = reg(a, bytes, chunk, T, false);
        double u = reg(a, bytes, chunk, T, true);
        std::printf("REG huge=%d chunk %4zu MiB T=%2d: register %.3f s (%.1f GB/s), unregister %.3f s (%.1f GB/s)\n",
                    huge, chunk / MiB, T, r, bytes / r / 1e9, u, bytes / u / 1e9);
      }
    }
    munmap(a, bytes);
  }

  // DMA rates: pinned (cudaMallocHost) vs registered pageable, H2D and D2H at once.
  char *d_in, *d_out;
  const size_t dbytes = std::min(bytes, size_t(4) * GiB);
  CK(cudaMalloc(&d_in, dbytes));
  CK(cudaMalloc(&d_out, dbytes));
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  auto both = [&](char* hin, char* hout) {
    const size_t piece = 64 * MiB;
    auto t = clk::now();
    for (size_t o = 0; o < dbytes; o += piece) {
      CK(cudaMemcpyAsync(d_in + o, hin + o, piece, cudaMemcpyHostToDevice, s1));
      CK(cudaMemcpyAsync(hout + o, d_out + o, piece, cudaMemcpyDeviceToHost, s2));
    }
    CK(cudaStreamSynchronize(s1));
    CK(cudaStreamSynchronize(s2));
    return since(t);
  };
  char *pin_a, *pin_b;
  CK(cudaMallocHost(&pin_a, dbytes));
  CK(cudaMallocHost(&pin_b, dbytes));
  fill(pin_a, dbytes, hc);
  both(pin_a, pin_b);
  for (int i = 0; i < 3; ++i) { double t = both(pin_a, pin_b); std::printf("DMA pinned both ways: %.3f s, %.1f GB/s each way\n", t, dbytes / t / 1e9); }
  {
    char* a = map(dbytes, true); char* b = map(dbytes, true);
    fill(a, dbytes, hc); fill(b, dbytes, hc);
    reg(a, dbytes, 256 * MiB, 8, false); reg(b, dbytes, 256 * MiB, 8, false);
    for (int i = 0; i < 3; ++i) { double t = both(a, b); std::printf("DMA registered (256 MiB chunks) both ways: %.3f s, %.1f GB/s each way\n", t, dbytes / t / 1e9); }
    reg(a, dbytes, 256 * MiB, 8, true); reg(b, dbytes, 256 * MiB, 8, true);
    munmap(a, dbytes); munmap(b, dbytes);
  }

  // Staging copies: pageable matrix (16384 f32 columns: 64 KiB rows) -> pinned tiles of 16 KiB rows.
  {
    char* a = map(dbytes, true);
    fill(a, dbytes, hc);
    for (int mode = 0; mode < 2; ++mode)
      for (int T : {4, 8, 16}) {
        tile_copy(pin_b, a, dbytes, 16384, 65536, T, mode);
        double t = tile_copy(pin_b, a, dbytes, 16384, 65536, T, mode);
        std::printf("COPY in  %s T=%2d: %.3f s, %.1f GB/s\n", mode ? "stream" : "memcpy", T, t, dbytes / t / 1e9);
      }
    // the same beside DMA on other pinned buffers (what the engine does)
    for (int mode = 0; mode < 2; ++mode)
      for (int T : {8, 16}) {
        std::atomic<bool> stop{false};
        std::thread dma([&] { while (!stop) both(pin_a, pin_a); });
        double t = tile_copy(pin_b, a, dbytes, 16384, 65536, T, mode);
        stop = true; dma.join();
        std::printf("COPY in beside DMA %s T=%2d: %.3f s, %.1f GB/s\n", mode ? "stream" : "memcpy", T, t, dbytes / t / 1e9);
      }
    munmap(a, dbytes);
  }
  return 0;
}
