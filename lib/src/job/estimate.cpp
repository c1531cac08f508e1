// A dry run's time estimate (job_internal.hpp: estimate_time). The stages
// of a run overlap (the report's overlap figure says how far), so the
// estimate is the slowest stage's time: its bytes over its rate. Each rate
// is measured here and now where a dry run can measure it without writing a
// file (reading the input, the CPU transposer), else a constant measured on
// the project's machines (ANCHORS.md), and the basis says which.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/stages.hpp"
#include "gtranspose/cpu_transpose.hpp"
#include "gtranspose/sizes.hpp"
#include "job/job_internal.hpp"

namespace gt {

namespace {

// ANCHORS.md, the H100 machine: pinned H2D and D2H at once, each way
// (34-44 GB/s; the low end, as a run's lanes share the link).
constexpr double kLinkEachWay = 34e9;
// ANCHORS.md, the H100 machine's disk: dd writing 4 GiB with fdatasync. A
// run's output is synced before it is committed, so a write rate above the
// disk's (the page cache's, say) would promise too much: on the 2-core CI
// machine a 256 MiB f32 run took 0.69 s while its input read at 4.4 GB/s.
constexpr double kDiskWrite = 0.93e9;
// ANCHORS.md: gzip level 4 + shuffle on one core of zlib, 512x512 f32 chunks.
constexpr double kInflatePerThread = 163e6;
constexpr double kDeflatePerThread = 44e6;
// How much of the input a dry run reads to time it, at most, and for how long.
constexpr std::uint64_t kProbeBytes = std::uint64_t(64) << 20;
constexpr double kProbeSeconds = 0.25;

std::string gbps(double r) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f GB/s", r / 1e9);
  return b;
}

// Reads the start of `path` in 4 MiB blocks for up to kProbeSeconds; bytes
// per second, 0 when it cannot (the input is unreadable, or empty).
double measure_read(const std::string& path, std::uint64_t* probed) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::vector<char> buf(std::size_t(4) << 20);
  std::uint64_t done = 0;
  const auto t0 = Clock::now();
  double s = 0;
  // A file smaller than the probe is read again from its start, so that
  // the time measured is long enough to mean something.
  std::uint64_t at = 0, size = 0;
  while (done < kProbeBytes && s < kProbeSeconds) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), off_t(at));
    if (n < 0 || (n == 0 && at == 0)) break;
    if (n == 0) {
      size = at;
      at = 0;
      continue;
    }
    done += std::uint64_t(n);
    at += std::uint64_t(n);
    s = seconds_between(t0, Clock::now());
  }
  ::close(fd);
  *probed = size ? std::min(size, done) : done;
  return done && s > 0 ? double(done) / s : 0;
}

// The CPU transposer on a 1024 x 1024 matrix in memory, repeated for about
// a tenth of a second: matrix bytes per second.
double measure_cpu_transpose(std::size_t es, int threads) {
  const std::uint64_t n = 1024;
  std::vector<unsigned char> in(n * n * es, 1), out(n * n * es);
  cpu_transpose(in.data(), n, n, n, out.data(), n, es, threads);  // warm: pages, threads
  int reps = 0;
  const auto t0 = Clock::now();
  double s = 0;
  while (s < 0.1) {
    cpu_transpose(in.data(), n, n, n, out.data(), n, es, threads);
    ++reps;
    s = seconds_between(t0, Clock::now());
  }
  return double(reps) * double(n * n * es) / s;
}

}  // namespace

void estimate_time(PlanSummary& p, const std::string& input_path, std::uint64_t bytes, std::size_t es,
                   bool filtered_in, bool filtered_out) {
  using Rate = PlanSummary::Rate;
  std::vector<std::pair<Rate, double>> stages;  // rate, bytes through it
  std::uint64_t probed = 0;
  const double read = measure_read(input_path, &probed);
  if (read <= 0) {
    p.estimate_basis = "no estimate: the input could not be timed as a plain file";
    return;
  }
  const std::string probe = "measured now reading the input's first " + format_bytes(probed) +
                            " (from the page cache if it holds them)";
  stages.push_back({{"read", read, true, probe}, double(bytes)});
  if (p.engine == "cpu") {
    const double t = measure_cpu_transpose(es, p.threads);
    stages.push_back({{"transpose", t, true,
                       "measured now: the CPU transposer, " + std::to_string(p.threads) + " threads, 1024x1024 in memory"},
                      double(bytes)});
  } else {
    stages.push_back({{"link", kLinkEachWay, false,
                       "ANCHORS.md: pinned H2D and D2H at once on the H100 machine, each way (the kernels are faster)"},
                      double(bytes)});
  }
  if (filtered_in)
    stages.push_back({{"decode", kInflatePerThread * std::max(1, p.codec_threads_in), false,
                       "ANCHORS.md: inflate (gzip-4 + shuffle) 163 MB/s a codec thread, " +
                           std::to_string(std::max(1, p.codec_threads_in)) + " threads"},
                      double(bytes)});
  if (filtered_out)
    stages.push_back({{"encode", kDeflatePerThread * std::max(1, p.codec_threads_out), false,
                       "ANCHORS.md: deflate (gzip-4 + shuffle) 44 MB/s a codec thread, " +
                           std::to_string(std::max(1, p.codec_threads_out)) + " threads"},
                      double(bytes)});
  // In place the journal's bytes are written too, by the same writer.
  const double write = std::min(read, kDiskWrite);
  stages.push_back({{"write", write, false,
                     "not measured (a dry run writes nothing): the read rate, at most ANCHORS.md's disk write with "
                     "fdatasync (0.93 GB/s)"},
                    double(bytes + p.journal_bytes)});
  double worst = 0;
  std::string slowest;
  for (const auto& [r, b] : stages) {
    p.estimate_rates.push_back(r);
    if (b / r.bytes_per_s > worst) {
      worst = b / r.bytes_per_s;
      slowest = r.stage;
    }
  }
  p.estimate_s = worst;
  p.estimate_basis = "the slowest stage (" + slowest + ", " + gbps(bytes / worst) +
                     " of matrix) with the stages overlapped; read measured now on the input's first " +
                     format_bytes(probed) + " (page cache possible), " +
                     (p.engine == "cpu" ? std::string("transposer measured now") : std::string("link from ANCHORS.md")) +
                     ", write not measured (the read rate, at most 0.93 GB/s: a disk's with fdatasync, ANCHORS.md)" +
                     (filtered_in || filtered_out ? ", codecs from ANCHORS.md (gzip-4 + shuffle)" : "");
}

}  // namespace gt
