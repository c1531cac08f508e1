#include "gtranspose/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/locked_matrix.hpp"
#include "cpu/engine_detail.hpp"
#include "cpu/host_buffer.hpp"
#include "cpu/pipeline.hpp"
#include "cpu/thread_pool.hpp"
#include "gtranspose/cpu_transpose.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/planner.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {

namespace cpu {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Runs fn and adds its duration to `busy`.
template <class F>
void timed(double& busy, F&& fn) {
  const auto t0 = Clock::now();
  fn();
  busy += seconds_since(t0);
}

void check_cancel(const RunOptions& opts) {
  if (opts.cancel && opts.cancel->load()) throw Error(ErrorKind::cancelled, "interrupted");
}

std::uint64_t host_budget(const RunOptions& opts) { return opts.host_mem ? opts.host_mem : default_host_budget(); }

RunReport base_report(const MatrixInfo& info, const char* mode, const RunOptions& opts, std::uint64_t budget) {
  RunReport r;
  r.engine = "cpu";
  r.kernel = "cpu-blocked";
  r.mode = mode;
  r.shape = info.shape;
  r.elem_size = info.elem_size;
  r.bytes = info.bytes();
  r.threads = resolve_threads(opts.threads);
  r.host_mem_budget = budget;
  return r;
}

}  // namespace

RunReport run_cpu_impl(Source& src, Sink& dst, const RunOptions& opts, EngineStats* stats) {
  const auto t_start = Clock::now();
  const MatrixInfo& in = src.info();
  const MatrixInfo& out = dst.info();
  if (!supported_elem_size(in.elem_size))
    throw Error(ErrorKind::usage, "unsupported element size " + std::to_string(in.elem_size) + " bytes");
  if (out.shape != in.shape.transposed() || out.elem_size != in.elem_size)
    throw Error(ErrorKind::internal, "output " + to_string(out.shape) + " does not match the transpose of input " +
                                         to_string(in.shape));
  const std::size_t es = in.elem_size;
  const std::uint64_t budget = host_budget(opts);

  PlanRequest req;
  req.shape = in.shape;
  req.elem_size = es;
  req.tile_bytes = tile_bytes_for(budget, kOutOfPlaceBuffers, opts.chunk_elems);
  req.preferred_block = src.preferred_block();
  req.chunk_elems = opts.chunk_elems;
  const Plan plan(req);

  // Two slots of (input tile, output tile) let reading, transposing and
  // writing overlap; a single tile needs only one slot.
  const int slots = plan.count() > 1 ? 2 : 1;
  const std::size_t tile_buf = std::size_t(plan.tile_h() * plan.tile_w() * es);
  std::vector<HostBuffer> ins, outs;
  for (int s = 0; s < slots; ++s) {
    ins.emplace_back(tile_buf);
    outs.emplace_back(tile_buf);
  }
  if (stats) {
    stats->buffers = 2 * slots;
    stats->buffer_bytes = std::uint64_t(2 * slots) * tile_buf;
    stats->tile_bytes = req.tile_bytes;
  }

  RunReport r = base_report(in, "out-of-place", opts, budget);
  r.input = src.describe();
  r.output = dst.describe();
  r.tiles = plan.count();
  r.tile_shape = {plan.tile_h(), plan.tile_w()};
  double t_read = 0, t_tr = 0, t_write = 0;
  const std::uint64_t total = r.bytes;
  std::uint64_t done = 0;

  // Each tile's input is h x w with ld = w; its transpose w x h with ld = h.
  Pipeline::run(
      plan.count(), slots,
      [&](std::uint64_t k, int s) {
        const Tile t = plan.tile_output_order(k);
        timed(t_read, [&] { src.read(t.r0, t.c0, t.h, t.w, ins[s].data(), t.w); });
      },
      [&](std::uint64_t k, int s) {
        const Tile t = plan.tile_output_order(k);
        timed(t_tr, [&] { cpu_transpose(ins[s].data(), t.h, t.w, t.w, outs[s].data(), t.h, es, opts.threads); });
      },
      [&](std::uint64_t k, int s) {
        const Tile t = plan.tile_output_order(k);
        timed(t_write, [&] {
          dst.write(t.c0, t.r0, t.w, t.h, outs[s].data(), t.h);
          // Tiles come in output order: the last tile of a tile column
          // finishes a band of output rows, which can go to disk now.
          if (t.r0 + t.h == in.shape.rows) dst.rows_complete(t.c0, t.w);
        });
        done += t.elems() * es;
        if (opts.progress) opts.progress(done, total);
      },
      [&] { check_cancel(opts); });

  r.stage("read") = {"read", t_read, total};
  r.stage("transpose") = {"transpose", t_tr, total};
  r.stage("write") = {"write", t_write, total};
  r.wall_s = seconds_since(t_start);
  r.host_mem_peak = peak_rss_bytes();
  return r;
}

namespace {

// "<n>M", rounded up: a value the user can pass to --host-mem.
std::string mib_text(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + "M"; }

}  // namespace

RunReport run_cpu_inplace_impl(InplaceMatrix& m, const RunOptions& opts, EngineStats* stats) {
  const auto t_start = Clock::now();
  const MatrixInfo& info = m.info();
  if (info.shape.rows != info.shape.cols)
    throw Error(ErrorKind::usage, "in-place transpose needs a square matrix, not " + to_string(info.shape));
  if (!supported_elem_size(info.elem_size))
    throw Error(ErrorKind::usage, "unsupported element size " + std::to_string(info.elem_size) + " bytes");
  const std::size_t es = info.elem_size;
  const std::uint64_t n = info.shape.rows;
  const std::uint64_t budget = host_budget(opts);
  const std::uint64_t tile_bytes = tile_bytes_for(budget, kInplaceBuffers, opts.chunk_elems);

  // Every pair goes through the writer: the job's journal, or straight to the matrix.
  std::unique_ptr<InplaceWriter> plain;
  InplaceWriter* writer = opts.writer;
  if (!writer) {
    plain = plain_inplace_writer();
    writer = plain.get();
  }
  // A resumed run keeps the tiles its journal was written with.
  const std::uint64_t kept = writer->required_block();
  const InplacePlan plan = kept ? InplacePlan::with_block(n, kept) : InplacePlan(n, es, tile_bytes, opts.chunk_elems);

  const int slots = plan.count() > 1 ? 2 : 1;
  const std::uint64_t b = plan.block();
  const std::size_t tile_buf = std::size_t(b * b * es);
  // Only edge pairs, whose tiles are not square, need the scratch tile.
  const bool ragged = n % b != 0 && plan.tiles_per_side() > 1;
  const int buffers = 2 * slots + (ragged ? 1 : 0);
  if (kept && std::uint64_t(buffers) * tile_buf > budget)
    throw Error(ErrorKind::usage, "the journal of " + m.describe() + " was written with " + std::to_string(b) + "x" +
                                      std::to_string(b) + " tiles, which need --host-mem " +
                                      mib_text(std::uint64_t(buffers) * tile_buf) + " or more: rerun with --resume --host-mem " +
                                      mib_text(std::uint64_t(buffers) * tile_buf));
  std::vector<HostBuffer> a_buf, b_buf;
  for (int s = 0; s < slots; ++s) {
    a_buf.emplace_back(tile_buf);
    b_buf.emplace_back(tile_buf);
  }
  HostBuffer scratch(ragged ? tile_buf : 0);
  if (stats) {
    stats->buffers = buffers;
    stats->buffer_bytes = std::uint64_t(stats->buffers) * tile_buf;
    stats->tile_bytes = tile_bytes;
  }

  RunReport r = base_report(info, "in-place", opts, budget);
  r.input = r.output = m.describe();
  r.tiles = plan.count();
  r.tile_shape = {b, b};
  double t_read = 0, t_tr = 0, t_write = 0;
  std::uint64_t read_bytes = 0, write_bytes = 0, done = 0;
  const std::uint64_t total = r.bytes;
  const auto pair_bytes = [&](const TilePair& p) { return (p.diagonal() ? 1 : 2) * p.a.elems() * es; };
  // A resumed run starts after the pairs its journal says are done.
  const std::uint64_t first = writer->first_pair();
  for (std::uint64_t k = 0; k < first; ++k) done += pair_bytes(plan.pair(k));
  // The matrix is one object read and written from two threads: take turns.
  std::mutex io_mu;
  LockedMatrix locked(m, io_mu);
  writer->begin(plan);

  // Pair k = tile A (rows i, cols j) and its mirror B. After the work stage
  // a_buf holds transpose(B), which goes where A was (h x w, ld w), and
  // b_buf holds transpose(A), which goes where B was (w x h, ld h).
  std::vector<PairWrite> batch(1);
  Pipeline::run(
      plan.count() - first, slots,
      [&](std::uint64_t k, int s) {
        const TilePair p = plan.pair(first + k);
        std::lock_guard<std::mutex> lk(io_mu);
        timed(t_read, [&] {
          m.read(p.a.r0, p.a.c0, p.a.h, p.a.w, a_buf[s].data(), p.a.w);
          if (!p.diagonal()) m.read(p.b.r0, p.b.c0, p.b.h, p.b.w, b_buf[s].data(), p.b.w);
        });
        read_bytes += pair_bytes(p);
      },
      [&](std::uint64_t k, int s) {
        const TilePair p = plan.pair(first + k);
        const std::uint64_t h = p.a.h, w = p.a.w;
        timed(t_tr, [&] {
          if (p.diagonal()) {
            cpu_transpose_inplace(a_buf[s].data(), h, h, es, opts.threads);
          } else if (h == w) {
            cpu_transpose_inplace(a_buf[s].data(), h, h, es, opts.threads);
            cpu_transpose_inplace(b_buf[s].data(), h, h, es, opts.threads);
            std::swap(a_buf[s], b_buf[s]);
          } else {
            cpu_transpose(a_buf[s].data(), h, w, w, scratch.data(), h, es, opts.threads);
            cpu_transpose(b_buf[s].data(), w, h, h, a_buf[s].data(), w, es, opts.threads);
            std::memcpy(b_buf[s].data(), scratch.data(), std::size_t(h * w * es));
          }
        });
      },
      [&](std::uint64_t k, int s) {
        const TilePair p = plan.pair(first + k);
        // On the diagonal the one tile, transposed in a_buf, goes back where it was.
        PairWrite& pw = batch[0];
        pw.index = first + k;
        pw.pair = p;
        pw.new_a = p.diagonal() ? nullptr : a_buf[s].data();
        pw.new_b = p.diagonal() ? a_buf[s].data() : b_buf[s].data();
        timed(t_write, [&] { writer->write_batch(locked, batch); });
        const std::uint64_t moved = pair_bytes(p);
        write_bytes += moved;
        done += moved;
        if (opts.progress) opts.progress(done, total);
      },
      [&] { check_cancel(opts); });
  timed(t_write, [&] { writer->finish(m); });

  r.stage("read") = {"read", t_read, read_bytes};
  r.stage("transpose") = {"transpose", t_tr, total};
  r.stage("write") = {"write", t_write, write_bytes};
  // The journal's own writes and syncs happen inside the write stage.
  if (writer->journal_bytes()) r.stage("journal") = {"journal", writer->journal_seconds(), writer->journal_bytes()};
  r.wall_s = seconds_since(t_start);
  r.host_mem_peak = peak_rss_bytes();
  return r;
}

}  // namespace cpu

RunReport run_cpu(Source& src, Sink& dst, const RunOptions& opts) { return cpu::run_cpu_impl(src, dst, opts, nullptr); }

RunReport run_cpu_inplace(InplaceMatrix& m, const RunOptions& opts) {
  return cpu::run_cpu_inplace_impl(m, opts, nullptr);
}

}  // namespace gt
