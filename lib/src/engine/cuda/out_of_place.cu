// The streaming engine, out of place: any Source to any Sink through the GPU.
//
//   reader threads   Source::read() of tile k into a pinned staging slot,
//                    then enqueue on lane k % lanes: H2D, kernel, D2H back
//                    into the same slot (stream order makes that safe);
//   writer threads   wait for tile k's last event, Sink::write() it, free
//                    the slot; a finished band of output rows starts its
//                    write-back (Sink::rows_complete).
//
// A matrix already in pinned host memory (HostView::pinned) skips staging:
// its tiles go to and from the device by 2-D DMA straight from the user's
// memory. One in pageable memory is copied by teams (plan read_team,
// write_team): each reader and writer splits its tile's copy into bands of
// rows that its team copies at once (core/team.hpp).
#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

#include "core/team.hpp"
#include "engine/cuda/streamer.cuh"
#include "gtranspose/error.hpp"
#include "gtranspose/kernels.hpp"

namespace gt::cuda {

RunReport run_out_of_place(PinnedPool& pool, Source& src, Sink& dst, const RunPlan& planned, const RunOptions& opts) {
  const std::size_t es = planned.info.elem_size;
  const kernels::KernelInfo& k = *kernels::find(planned.kernel);
  const HostView* in_view = src.host_view();
  const HostView* out_view = dst.host_view();
  const bool in_direct = planned.direct_in, out_direct = planned.direct_out;

  Streamer s(pool);
  const RunPlan plan = s.allocate_device(planned);
  s.allocate_slots(plan);
  RunReport r = start_report(plan);
  const TileGrid& grid = *plan.grid;

  // Write-back: an output row band is done when all its tiles (one tile
  // column of the input) are written.
  std::vector<std::uint64_t> band_left(grid.tile_cols(), grid.tile_rows());
  std::mutex band_mu;
  const std::uint64_t total = plan.info.bytes();

  auto reader = [&] {
    CopyTeam team(plan.read_team);
    int si;
    std::uint64_t item;
    while (s.ring.take(si, item)) {
      check_cancel(opts);
      const Tile t = grid.tile_output_order(item);
      Slot& sl = *s.slots[si];
      if (!in_direct) s.clock.timed(s.read, [&] { team_read(team, src, t, sl.buf.get(), es); });
      Lane& ln = *s.lanes[item % s.lanes.size()];
      {
        std::lock_guard<std::mutex> lk(ln.mu);
        cudaStream_t st = ln.stream.get();
        const std::size_t bytes = std::size_t(t.elems() * es);
        GT_CUDA_CHECK(cudaEventRecord(sl.start.get(), st));
        if (in_direct)
          copy_in(ln.d[0].get(), *in_view, t, es, st);
        else
          GT_CUDA_CHECK(cudaMemcpyAsync(ln.d[0].get(), sl.buf.get(), bytes, cudaMemcpyHostToDevice, st));
        GT_CUDA_CHECK(cudaEventRecord(sl.h2d.get(), st));
        k.launch(ln.d[0].get(), ln.d[1].get(), kernels::Problem{t.h, t.w, es, t.w, t.h}, st);
        GT_CUDA_CHECK(cudaEventRecord(sl.kernel.get(), st));
        const Tile o{t.c0, t.r0, t.w, t.h};  // where it lands in the output
        if (out_direct)
          copy_out(*out_view, o, ln.d[1].get(), es, st);
        else
          GT_CUDA_CHECK(cudaMemcpyAsync(sl.buf.get(), ln.d[1].get(), bytes, cudaMemcpyDeviceToHost, st));
        GT_CUDA_CHECK(cudaEventRecord(sl.done.get(), st));
      }
      s.ring.queued(item, si);
    }
  };
  auto writer = [&] {
    CopyTeam team(plan.write_team);
    int si;
    std::uint64_t item;
    while (s.ring.next(item, si)) {
      Slot& sl = *s.slots[si];
      GT_CUDA_CHECK(cudaEventSynchronize(sl.done.get()));
      const Tile t = grid.tile_output_order(item);
      s.account_gpu(sl, t.elems() * es);
      if (!out_direct) s.clock.timed(s.write, [&] { team_write(team, dst, t, sl.buf.get(), es); });
      s.ring.release(si);
      bool band_done = false;
      {
        // Under the lock: the callback sees one call at a time, in order.
        std::lock_guard<std::mutex> lk(band_mu);
        band_done = --band_left[t.c0 / grid.tile_w()] == 0;
        std::uint64_t done;
        {
          std::lock_guard<std::mutex> lk2(s.clock.mutex());
          done = s.done += t.elems() * es;
        }
        if (opts.progress) opts.progress(done, total);
      }
      if (band_done) dst.rows_complete(t.c0, t.w);
    }
  };
  s.run(plan.readers, plan.writers, reader, writer);
  s.finish_report(r, in_direct ? 0 : total, out_direct ? 0 : total, total);
  return r;
}

}  // namespace gt::cuda
