// One rank's share of a run as matrices of their own, so that the engine
// and the run plan see an ordinary run (execute(), job.hpp) and decide
// nothing differently: the input's columns [c0, c0+n) as a Source, the
// output's rows [c0, c0+n) as a Sink. A rank writes its rows
//   - through rank 0's own sink (rank 0: BandSink over it),
//   - or by pwrite into the file rank 0 created (plain layouts: SharedFileSink),
//   - or, for a chunked HDF5 output, as encoded chunks sent to rank 0
//     (ChunkSender), which stores them (Sink::write_stored_chunk).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "formats/codecs/pipeline.hpp"
#include "formats/codecs/pool.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/matrix.hpp"
#include "gtranspose/plan.hpp"
#include "mpi/comm.hpp"

namespace gt::mpi {

// What a chunk message to rank 0 starts with; the encoded bytes follow.
// kind 0: a chunk; kind 1: the sender's end (no chunk follows).
struct ChunkHeader {
  std::uint64_t kind = 0, i = 0, j = 0, mask = 0;
};

// A format's codec threads, this rank's share of the node's (plan_rank_threads).
inline CodecDemand rank_share(CodecDemand d, int local_ranks) {
  d.threads = plan_rank_threads(d.threads, local_ranks);
  return d;
}

class BandSource final : public Source {
 public:
  // `local_ranks`: the ranks of this node, who share its cores (plan_rank_threads).
  BandSource(Source& whole, std::uint64_t c0, std::uint64_t cols, int local_ranks);
  const MatrixInfo& info() const override { return info_; }
  const Location& location() const override { return s_.location(); }
  void read(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, void* dst,
            std::uint64_t ld) override {
    s_.read(r0, c0_ + c0, h, w, dst, ld);
  }
  Shape preferred_block() const override { return s_.preferred_block(); }
  std::uint64_t reserved_bytes() const override { return s_.reserved_bytes(); }
  bool concurrent_reads() const override { return s_.concurrent_reads(); }
  NativeType native_type() const override { return s_.native_type(); }
  CodecDemand codec_demand() const override { return rank_share(s_.codec_demand(), local_ranks_); }
  void set_codec_threads(int n) override { s_.set_codec_threads(n); }
  FormatReport format_report() const override { return s_.format_report(); }
  std::string describe() const override { return s_.describe(); }

 private:
  Source& s_;
  std::uint64_t c0_;
  int local_ranks_;
  MatrixInfo info_;
};

// Rows [r0, r0+rows) of a sink this process holds (rank 0's).
class BandSink final : public Sink {
 public:
  BandSink(Sink& whole, std::uint64_t r0, std::uint64_t rows, int rank, int local_ranks);
  const MatrixInfo& info() const override { return info_; }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override;
  void commit() override {}  // the whole sink commits, once every rank is done
  bool concurrent_writes() const override { return s_.concurrent_writes(); }
  void rows_complete(std::uint64_t r0, std::uint64_t h) override { s_.rows_complete(r0_ + r0, h); }
  std::uint64_t reserved_bytes() const override { return s_.reserved_bytes(); }
  CodecDemand codec_demand() const override { return rank_share(s_.codec_demand(), local_ranks_); }
  void set_codec_threads(int n) override { s_.set_codec_threads(n); }
  FormatReport format_report() const override { return s_.format_report(); }
  std::string describe() const override { return s_.describe(); }

 private:
  Sink& s_;
  std::uint64_t r0_;
  int rank_, local_ranks_;
  MatrixInfo info_;
};

// Rows [r0, r0+rows) of the output file rank 0 created (SharedLayout::plain),
// written by pwrite at their offsets; commit() makes them durable (the file
// is renamed by rank 0).
class SharedFileSink final : public Sink {
 public:
  SharedFileSink(const SharedLayout& layout, const MatrixInfo& whole, std::uint64_t r0, std::uint64_t rows, int rank,
                 std::string what);
  const MatrixInfo& info() const override { return info_; }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override;
  void commit() override;
  bool concurrent_writes() const override { return true; }
  void rows_complete(std::uint64_t r0, std::uint64_t h) override { m_.start_writeback(r0_ + r0, h); }
  std::string describe() const override { return what_; }

 private:
  fmt::Fd fd_;
  fmt::PlainMatrix m_;
  std::uint64_t r0_;
  int rank_;
  MatrixInfo info_;
  std::string what_;
};

// Rows [r0, r0+rows) of a chunked output (SharedLayout::chunks; r0 on a
// chunk row): each chunk, once whole, is encoded on the sink's codec
// threads and sent to rank 0. Tiles the plan cuts in whole chunks complete
// their chunks in one write; other writes keep a chunk's part until the rest
// arrives.
class ChunkSender final : public Sink {
 public:
  ChunkSender(Comm& comm, const SharedLayout& layout, const MatrixInfo& whole, std::uint64_t r0, std::uint64_t rows,
              std::string what);
  ~ChunkSender() override;
  const MatrixInfo& info() const override { return info_; }
  void write(std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, const void* src,
             std::uint64_t ld) override;
  void commit() override;  // every chunk sent, or gt::Error(internal) naming one left incomplete
  CodecDemand codec_demand() const override;
  void set_codec_threads(int n) override;
  FormatReport format_report() const override;
  std::string describe() const override { return what_; }

 private:
  struct Part {
    std::vector<unsigned char> data;  // the whole chunk, zero-padded at the edges
    std::uint64_t filled = 0;         // elements written so far
  };
  std::uint64_t chunk_elems(std::uint64_t i, std::uint64_t j) const;  // inside the matrix
  void encode_and_send(std::uint64_t i, std::uint64_t j, Part& p, int worker);

  Comm& comm_;
  codecs::Pipeline pipeline_;
  Shape chunk_;
  std::uint64_t r0_, ci0_, chunk_bytes_;
  MatrixInfo info_, whole_;
  std::string what_;
  std::mutex mu_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Part> parts_;  // chunks (band coordinates) not yet whole
  std::unique_ptr<codecs::WorkerPool> pool_;
  std::vector<codecs::WorkBuffers> bufs_;
  std::atomic<std::uint64_t> codec_ns_{0}, raw_{0}, stored_{0}, chunks_{0};
};

}  // namespace gt::mpi
