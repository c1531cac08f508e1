// One rank's share as matrices of their own (bands.hpp).
#include "mpi/bands.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/stages.hpp"
#include "gtranspose/machine.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::mpi {

namespace {

// The test hook of gtranspose/mpi.hpp: GT_TEST_MPI_FAIL_RANK=k makes rank
// k's first write fail as a full disk would, after its band was read and
// transposed, while the other ranks are writing theirs.
void injected_failure(int rank) {
  // GT_TEST_MPI_STALL_RANK=k: rank k stalls in its first write for a minute,
  // so that a test can interrupt a run that is surely under way.
  if (const char* st = std::getenv("GT_TEST_MPI_STALL_RANK"); st && *st && std::atoi(st) == rank)
    std::this_thread::sleep_for(std::chrono::seconds(60));
  const char* v = std::getenv("GT_TEST_MPI_FAIL_RANK");
  if (!v || !*v || std::atoi(v) != rank) return;
  throw Error(ErrorKind::io, "cannot write the output: No space left on device (injected by GT_TEST_MPI_FAIL_RANK)",
              28);
}

}  // namespace

BandSource::BandSource(Source& whole, std::uint64_t c0, std::uint64_t cols, int local_ranks)
    : s_(whole), c0_(c0), local_ranks_(local_ranks) {
  info_ = whole.info();
  info_.shape.cols = cols;
}

BandSink::BandSink(Sink& whole, std::uint64_t r0, std::uint64_t rows, int rank, int local_ranks)
    : s_(whole), r0_(r0), rank_(rank), local_ranks_(local_ranks) {
  info_ = whole.info();
  info_.shape.rows = rows;
}

void BandSink::write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
                     std::uint64_t ld) {
  injected_failure(rank_);
  s_.write(r0_ + r0, c0, h, w, src, ld);
}

SharedFileSink::SharedFileSink(const SharedLayout& layout, const MatrixInfo& whole, std::uint64_t r0,
                               std::uint64_t rows, int rank, std::string what)
    : fd_(fmt::open_existing(layout.path, true, what)), r0_(r0), rank_(rank), what_(std::move(what)) {
  m_.fd = fd_.get();
  m_.data_offset = layout.data_offset;
  m_.logical = whole.shape;
  m_.elem_size = whole.elem_size;
  m_.name = what_;
  info_ = whole;
  info_.shape.rows = rows;
}

void SharedFileSink::write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
                           std::uint64_t ld) {
  injected_failure(rank_);
  if (!fd_) throw Error(ErrorKind::internal, "write to " + what_ + " after commit()");
  if (r0 + h > info_.shape.rows) throw Error(ErrorKind::internal, "a write past this rank's rows of " + what_);
  m_.write(r0_ + r0, c0, h, w, src, ld);
}

void SharedFileSink::commit() {
  if (!fd_) return;
  // Each rank makes its own writes durable (on a parallel file system, one
  // node's fsync does not cover another's); rank 0 renames once all did.
  fmt::sync_file(fd_.get(), what_, true);
  fd_.reset();
}

ChunkSender::ChunkSender(Comm& comm, const SharedLayout& layout, const MatrixInfo& whole, std::uint64_t r0,
                         std::uint64_t rows, std::string what)
    : comm_(comm), chunk_(layout.chunk), r0_(r0), whole_(whole), what_(std::move(what)) {
  std::vector<codecs::FilterSpec> specs;
  for (const StoredFilter& f : layout.filters) specs.push_back({f.id, f.flags, f.values});
  std::string why;
  auto p = codecs::Pipeline::make(specs, &why);
  if (!p) throw Error(ErrorKind::internal, "rank 0 shares a chunk pipeline this rank cannot build: " + why);
  pipeline_ = std::move(*p);
  if (!chunk_.rows || !chunk_.cols || r0 % chunk_.rows)
    throw Error(ErrorKind::internal, "a rank's rows of " + what_ + " do not start on a chunk");
  ci0_ = r0 / chunk_.rows;
  chunk_bytes_ = chunk_.rows * chunk_.cols * whole.elem_size;
  info_ = whole;
  info_.shape.rows = rows;
  set_codec_threads(1);
}

ChunkSender::~ChunkSender() = default;

CodecDemand ChunkSender::codec_demand() const {
  const std::size_t cb = std::size_t(chunk_bytes_);
  // Two work buffers, the codecs' state, and the message (header + the encoded chunk).
  return {plan_rank_threads(int(usable_cores()), comm_.local_size()),
          3 * pipeline_.buffer_bytes(cb) + pipeline_.state_bytes(cb) + sizeof(ChunkHeader)};
}

void ChunkSender::set_codec_threads(int n) {
  n = std::max(1, n);
  pool_ = n > 1 ? std::make_unique<codecs::WorkerPool>(n) : nullptr;
  bufs_.assign(std::size_t(n), {});
  for (auto& b : bufs_) pipeline_.prepare(b, std::size_t(chunk_bytes_));
}

std::uint64_t ChunkSender::chunk_elems(std::uint64_t i, std::uint64_t j) const {
  const std::uint64_t r = i * chunk_.rows, c = j * chunk_.cols;
  return std::min(chunk_.rows, info_.shape.rows - r) * std::min(chunk_.cols, info_.shape.cols - c);
}

void ChunkSender::write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
                        std::uint64_t ld) {
  injected_failure(comm_.rank());
  if (h == 0 || w == 0) return;
  if (r0 + h > info_.shape.rows || c0 + w > info_.shape.cols || ld < w)
    throw Error(ErrorKind::internal, "a write outside this rank's rows of " + what_);
  const std::size_t es = info_.elem_size;
  const auto* in = static_cast<const unsigned char*>(src);
  std::vector<std::pair<std::pair<std::uint64_t, std::uint64_t>, Part>> whole;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (std::uint64_t i = r0 / chunk_.rows; i <= (r0 + h - 1) / chunk_.rows; ++i)
      for (std::uint64_t j = c0 / chunk_.cols; j <= (c0 + w - 1) / chunk_.cols; ++j) {
        Part& p = parts_[{i, j}];
        if (p.data.empty()) p.data.assign(std::size_t(chunk_bytes_), 0);  // edges stay zero, as HDF5 stores them
        const std::uint64_t a0 = std::max(r0, i * chunk_.rows), a1 = std::min(r0 + h, (i + 1) * chunk_.rows);
        const std::uint64_t b0 = std::max(c0, j * chunk_.cols), b1 = std::min(c0 + w, (j + 1) * chunk_.cols);
        for (std::uint64_t r = a0; r < a1; ++r)
          std::memcpy(p.data.data() + ((r - i * chunk_.rows) * chunk_.cols + (b0 - j * chunk_.cols)) * es,
                      in + ((r - r0) * ld + (b0 - c0)) * es, std::size_t((b1 - b0) * es));
        p.filled += (a1 - a0) * (b1 - b0);
        if (p.filled == chunk_elems(i, j)) {
          whole.push_back({{i, j}, std::move(p)});
          parts_.erase({i, j});
        }
      }
  }
  auto job = [&](std::size_t k, int worker) {
    encode_and_send(whole[k].first.first, whole[k].first.second, whole[k].second, worker);
  };
  if (pool_) {
    pool_->run(whole.size(), job);
  } else {
    for (std::size_t k = 0; k < whole.size(); ++k) job(k, 0);
  }
}

void ChunkSender::encode_and_send(std::uint64_t i, std::uint64_t j, Part& p, int worker) {
  codecs::WorkBuffers& wb = bufs_[std::size_t(worker)];
  std::memcpy(wb.a.data(), p.data.data(), std::size_t(chunk_bytes_));
  std::vector<unsigned char>().swap(p.data);
  const auto t0 = Clock::now();
  codecs::Coded e;
  try {
    e = pipeline_.encode(wb, std::size_t(chunk_bytes_));
  } catch (const codecs::CodecError& err) {
    throw Error(ErrorKind::io, "cannot encode chunk (" + std::to_string(ci0_ + i) + ", " + std::to_string(j) + ") of " +
                                   what_ + ": " + err.what());
  }
  codec_ns_ += std::uint64_t(seconds_between(t0, Clock::now()) * 1e9);
  std::vector<unsigned char> msg(sizeof(ChunkHeader) + e.size);
  const ChunkHeader h{0, ci0_ + i, j, e.mask};
  std::memcpy(msg.data(), &h, sizeof h);
  std::memcpy(msg.data() + sizeof h, e.data, e.size);
  comm_.send(0, kTagData, msg.data(), msg.size());
  raw_ += chunk_bytes_;
  stored_ += e.size;
  ++chunks_;
}

void ChunkSender::commit() {
  std::lock_guard<std::mutex> lk(mu_);
  if (!parts_.empty())
    throw Error(ErrorKind::internal, "chunk (" + std::to_string(ci0_ + parts_.begin()->first.first) + ", " +
                                         std::to_string(parts_.begin()->first.second) + ") of " + what_ +
                                         " was never written whole");
}

FormatReport ChunkSender::format_report() const {
  FormatReport r;
  r.stages.push_back({"encode", double(codec_ns_.load()) / 1e9, raw_.load()});
  const std::uint64_t raw = raw_.load(), stored = stored_.load();
  r.notes.push_back("HDF5 write: " + std::to_string(chunks_.load()) + " chunks encoded here (" + pipeline_.names() +
                    ", " + std::to_string(bufs_.size()) + " threads) and stored by rank 0: " + format_bytes(raw) +
                    " as " + format_bytes(stored));
  return r;
}

}  // namespace gt::mpi
