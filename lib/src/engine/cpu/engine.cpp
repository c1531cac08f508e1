// The CPU engine: a reader thread, the multithreaded transposer, a writer
// thread (Pipeline), over the tiles of a run plan. The reference for every
// other engine and the fallback where there is no GPU.
#include "engine/cpu/engine.hpp"

#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "core/stages.hpp"
#include "engine/cpu/host_buffer.hpp"
#include "engine/cpu/pipeline.hpp"
#include "engine/cpu/thread_pool.hpp"
#include "gtranspose/cpu_transpose.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "inplace/locked_matrix.hpp"

namespace gt::cpu {

namespace {

void check_cancel(const RunOptions& opts) {
  if (opts.cancel && opts.cancel->load()) throw Error(ErrorKind::cancelled, "interrupted");
}

// Tile buffers, allocated as the plan counts them.
std::vector<HostBuffer> buffers(int count, std::uint64_t bytes) {
  std::vector<HostBuffer> v;
  for (int i = 0; i < count; ++i) v.emplace_back(std::size_t(bytes));
  return v;
}

class CpuEngine final : public Engine {
 public:
  EngineKind kind() const override { return EngineKind::cpu; }

  EngineCaps caps(const RunOptions& opts, std::size_t) const override {
    EngineCaps c;
    c.kind = EngineKind::cpu;
    c.kernel = "cpu-blocked";
    c.threads = resolve_threads(opts.threads);
    // A name this build does not know at all is said as such; a CUDA
    // kernel's name is the plan's to refuse (plan.hpp: the CPU engine runs
    // no kernel, so the option cannot apply).
    if (!opts.kernel.empty() && opts.kernel != "auto" && !kernel_known(opts.kernel))
      throw Error(ErrorKind::usage, "unknown kernel '" + opts.kernel + "'" +
                                        (built_with_cuda() ? std::string() : ": this build has no CUDA kernels") +
                                        "; use {kernel} auto");
    return c;
  }

  RunReport run(Source& src, Sink& dst, const RunPlan& plan, const RunOptions& opts) override;
  RunReport run_inplace(InplaceMatrix& m, InplaceWriter& writer, const RunPlan& plan,
                        const RunOptions& opts) override;
};

// The direct paths' loop (host memory, no buffers): `count` units in order,
// each timed as the transpose stage and returning the bytes it moved; cancel
// checked before each, progress said after.
template <class F>
RunReport run_units(const RunPlan& plan, const RunOptions& opts, std::uint64_t count, F&& unit) {
  StageClock clock;
  RunReport r = start_report(plan);
  Intervals t_tr;
  std::uint64_t done = 0;
  for (std::uint64_t k = 0; k < count; ++k) {
    check_cancel(opts);
    std::uint64_t moved = 0;
    clock.timed(t_tr, [&] { moved = unit(k); });
    done += moved;
    if (opts.progress) opts.progress(done, r.bytes);
  }
  set_stage(r, "transpose", t_tr, r.bytes);
  r.host_buffers = 0;
  end_report(r, clock.now());
  return r;
}

// Host memory both sides (the plan's direct_in and direct_out): each tile
// transposed from the input straight into the output, in output order.
RunReport run_direct(const HostView& in, const HostView& out, const RunPlan& plan, const RunOptions& opts) {
  const TileGrid& grid = *plan.grid;
  const std::size_t es = plan.info.elem_size;
  const auto* from = static_cast<const unsigned char*>(in.data);
  auto* to = static_cast<unsigned char*>(out.data);
  return run_units(plan, opts, grid.count(), [&](std::uint64_t k) {
    const Tile t = grid.tile_output_order(k);
    cpu_transpose(from + (t.r0 * in.ld + t.c0) * es, t.h, t.w, in.ld, to + (t.c0 * out.ld + t.r0) * es, out.ld, es,
                  plan.threads);
    return t.elems() * es;
  });
}

RunReport CpuEngine::run(Source& src, Sink& dst, const RunPlan& plan, const RunOptions& opts) {
  if (plan.direct_in && plan.direct_out) {
    if (!src.host_view() || !dst.host_view())
      throw Error(ErrorKind::internal, "cpu engine: a direct plan for a matrix not in host memory");
    return run_direct(*src.host_view(), *dst.host_view(), plan, opts);
  }
  StageClock clock;
  const TileGrid& grid = *plan.grid;
  const std::size_t es = plan.info.elem_size;
  const std::uint64_t tile_buf = plan.tile_buffer_bytes();
  std::vector<HostBuffer> ins = buffers(plan.slots, tile_buf), outs = buffers(plan.slots, tile_buf);

  RunReport r = start_report(plan);
  Intervals t_read, t_tr, t_write;
  const std::uint64_t total = r.bytes, rows = plan.info.shape.rows;
  std::uint64_t done = 0;

  // Each tile's input is h x w with ld = w; its transpose w x h with ld = h.
  Pipeline::run(
      grid.count(), plan.slots,
      [&](std::uint64_t k, int s) {
        const Tile t = grid.tile_output_order(k);
        clock.timed(t_read, [&] { src.read(t.r0, t.c0, t.h, t.w, ins[s].data(), t.w); });
      },
      [&](std::uint64_t k, int s) {
        const Tile t = grid.tile_output_order(k);
        clock.timed(t_tr, [&] { cpu_transpose(ins[s].data(), t.h, t.w, t.w, outs[s].data(), t.h, es, plan.threads); });
      },
      [&](std::uint64_t k, int s) {
        const Tile t = grid.tile_output_order(k);
        clock.timed(t_write, [&] {
          dst.write(t.c0, t.r0, t.w, t.h, outs[s].data(), t.h);
          // Tiles come in output order: the last tile of a tile column
          // finishes a band of output rows, which can go to disk now.
          if (t.r0 + t.h == rows) dst.rows_complete(t.c0, t.w);
        });
        done += t.elems() * es;
        if (opts.progress) opts.progress(done, total);
      },
      [&] { check_cancel(opts); });

  set_stage(r, "read", t_read, total);
  set_stage(r, "transpose", t_tr, total);
  set_stage(r, "write", t_write, total);
  r.host_buffers = std::uint64_t(ins.size() + outs.size()) * tile_buf;
  end_report(r, clock.now());
  return r;
}

// A square in host memory (the plan's direct_in): each pair of tiles
// swapped where it lies, in the grid's order.
RunReport run_inplace_direct(const HostView& v, const RunPlan& plan, const RunOptions& opts) {
  const PairGrid& grid = *plan.pairs;
  const std::size_t es = plan.info.elem_size;
  auto* base = static_cast<unsigned char*>(v.data);
  auto at = [&](const Tile& t) { return base + (t.r0 * v.ld + t.c0) * es; };
  return run_units(plan, opts, grid.count(), [&](std::uint64_t k) {
    const TilePair p = grid.pair(k);
    if (p.diagonal())
      cpu_transpose_inplace(at(p.a), p.a.h, v.ld, es, plan.threads);
    else
      cpu_transpose_pair(at(p.a), at(p.b), p.a.h, p.a.w, v.ld, es, plan.threads);
    return (p.diagonal() ? 1 : 2) * p.a.elems() * es;
  });
}

RunReport CpuEngine::run_inplace(InplaceMatrix& m, InplaceWriter& writer, const RunPlan& plan,
                                 const RunOptions& opts) {
  if (plan.direct_in) {
    if (!m.host_view()) throw Error(ErrorKind::internal, "cpu engine: a direct plan for a matrix not in host memory");
    return run_inplace_direct(*m.host_view(), plan, opts);
  }
  StageClock clock;
  const PairGrid& grid = *plan.pairs;
  const std::size_t es = plan.info.elem_size;
  const std::uint64_t tile_buf = plan.tile_buffer_bytes();
  std::vector<HostBuffer> a_buf = buffers(plan.slots, tile_buf), b_buf = buffers(plan.slots, tile_buf);
  std::vector<std::uint64_t> a_sums(std::size_t(plan.slots), 0);
  HostBuffer scratch(plan.scratch ? tile_buf : 0);
  const bool sums = writer.wants_source_sums();

  RunReport r = start_report(plan);
  Intervals t_read, t_tr, t_write;
  std::uint64_t read_bytes = 0, write_bytes = 0, done = 0;
  const std::uint64_t total = r.bytes;
  const auto pair_bytes = [&](const TilePair& p) { return (p.diagonal() ? 1 : 2) * p.a.elems() * es; };
  // A resumed run starts after the pairs its journal says are done.
  const std::uint64_t first = plan.first_pair;
  for (std::uint64_t k = 0; k < first; ++k) done += pair_bytes(grid.pair(k));
  // A matrix that takes one call at a time (HDF5 through its library) is
  // read and written from two threads: they take turns, call by call.
  std::mutex io_mu;
  LockedMatrix locked(m, io_mu);
  InplaceMatrix& io = m.concurrent_io() ? m : static_cast<InplaceMatrix&>(locked);
  writer.begin(grid);

  // Pair k = tile A (rows i, cols j) and its mirror B. After the work stage
  // a_buf holds transpose(B), which goes where A was (h x w, ld w), and
  // b_buf holds transpose(A), which goes where B was (w x h, ld h).
  std::vector<PairWrite> batch(1);
  Pipeline::run(
      grid.count() - first, plan.slots,
      [&](std::uint64_t k, int s) {
        const TilePair p = grid.pair(first + k);
        clock.timed(t_read, [&] {
          io.read(p.a.r0, p.a.c0, p.a.h, p.a.w, a_buf[s].data(), p.a.w);
          if (!p.diagonal()) io.read(p.b.r0, p.b.c0, p.b.h, p.b.w, b_buf[s].data(), p.b.w);
          // Tile a as read, for the journal to tell later whether it was touched.
          if (sums) a_sums[std::size_t(s)] = writer.source_sum(a_buf[s].data(), p.a.elems() * es);
        });
        read_bytes += pair_bytes(p);
      },
      [&](std::uint64_t k, int s) {
        const TilePair p = grid.pair(first + k);
        const std::uint64_t h = p.a.h, w = p.a.w;
        clock.timed(t_tr, [&] {
          if (p.diagonal()) {
            cpu_transpose_inplace(a_buf[s].data(), h, h, es, plan.threads);
          } else if (h == w) {
            cpu_transpose_inplace(a_buf[s].data(), h, h, es, plan.threads);
            cpu_transpose_inplace(b_buf[s].data(), h, h, es, plan.threads);
            std::swap(a_buf[s], b_buf[s]);
          } else {
            cpu_transpose(a_buf[s].data(), h, w, w, scratch.data(), h, es, plan.threads);
            cpu_transpose(b_buf[s].data(), w, h, h, a_buf[s].data(), w, es, plan.threads);
            std::memcpy(b_buf[s].data(), scratch.data(), std::size_t(h * w * es));
          }
        });
      },
      [&](std::uint64_t k, int s) {
        const TilePair p = grid.pair(first + k);
        // On the diagonal the one tile, transposed in a_buf, goes back where it was.
        PairWrite& pw = batch[0];
        pw.index = first + k;
        pw.pair = p;
        pw.new_a = p.diagonal() ? nullptr : a_buf[s].data();
        pw.new_b = p.diagonal() ? a_buf[s].data() : b_buf[s].data();
        pw.a_sum = a_sums[std::size_t(s)];
        pw.has_a_sum = sums;
        clock.timed(t_write, [&] { writer.write_batch(io, batch); });
        const std::uint64_t moved = pair_bytes(p);
        write_bytes += moved;
        done += moved;
        if (opts.progress) opts.progress(done, total);
      },
      [&] { check_cancel(opts); }, writer.batches_kept());
  clock.timed(t_write, [&] { writer.finish(io); });

  set_stage(r, "read", t_read, read_bytes);
  set_stage(r, "transpose", t_tr, total);
  set_stage(r, "write", t_write, write_bytes);
  r.host_buffers = std::uint64_t(a_buf.size() + b_buf.size()) * tile_buf + scratch.size();
  end_report(r, clock.now());
  return r;
}

}  // namespace

std::unique_ptr<Engine> make_cpu_engine() { return std::make_unique<CpuEngine>(); }

}  // namespace gt::cpu
