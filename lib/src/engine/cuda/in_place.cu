// The streaming engine, in place on a square matrix: pairs of tiles (a, b)
// go through a lane's three device buffers (a, b, and one for the kernels'
// output), then to the InplaceWriter, which orders their writes (the
// journal) or writes them as they come (the plain writer).
//
// A matrix in pinned host memory with the plain writer skips staging: both
// tiles of a pair go to and from the device by 2-D DMA straight from it.
#include <cuda_runtime_api.h>

#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/cuda/streamer.cuh"
#include "gtranspose/error.hpp"
#include "gtranspose/kernels.hpp"
#include "inplace/locked_matrix.hpp"

namespace gt::cuda {

RunReport run_in_place(PinnedPool& pool, InplaceMatrix& matrix, InplaceWriter& w, const RunPlan& planned,
                       const RunOptions& opts) {
  // A matrix that allows one call at a time (HDF5 through its library) is
  // shared call by call between the reader threads and the writer.
  std::mutex io_mu;
  LockedMatrix locked(matrix, io_mu);
  InplaceMatrix& m = matrix.concurrent_io() ? matrix : static_cast<InplaceMatrix&>(locked);
  const std::size_t es = planned.info.elem_size;
  const kernels::KernelInfo& k = *kernels::find(planned.kernel);
  const HostView* view = m.host_view();
  const bool direct = planned.direct_in;

  Streamer s(pool);
  const RunPlan plan = s.allocate_device(planned);
  s.allocate_slots(plan);
  RunReport r = start_report(plan);
  const PairGrid& grid = *plan.pairs;
  const std::uint64_t first = plan.first_pair;
  const std::size_t tile = std::size_t(plan.tile_buffer_bytes());

  w.begin(grid);
  std::uint64_t moved_before = 0;  // bytes of the pairs done before a resume
  for (std::uint64_t i = 0; i < first; ++i) {
    const TilePair p = grid.pair(i);
    moved_before += (p.diagonal() ? 1 : 2) * p.a.elems() * es;
  }
  s.done = moved_before;
  const std::uint64_t total = plan.info.bytes();
  std::uint64_t gpu_bytes = 0;
  std::mutex progress_mu;
  // Tile a's checksum as read, per slot, where the writer wants it (a journal).
  const bool sums = w.wants_source_sums() && !direct;
  std::vector<std::uint64_t> a_sums(s.slots.size(), 0);

  auto reader = [&] {
    int si;
    std::uint64_t item;
    while (s.ring.take(si, item)) {
      check_cancel(opts);
      const TilePair p = grid.pair(first + item);
      Slot& sl = *s.slots[si];
      unsigned char* ha = sl.buf.get();
      unsigned char* hb = ha ? ha + tile : nullptr;
      if (!direct)
        s.clock.timed(s.read, [&] {
          m.read(p.a.r0, p.a.c0, p.a.h, p.a.w, ha, p.a.w);
          if (!p.diagonal()) m.read(p.b.r0, p.b.c0, p.b.h, p.b.w, hb, p.b.w);
          if (sums) a_sums[std::size_t(si)] = w.source_sum(ha, p.a.elems() * es);
        });
      Lane& ln = *s.lanes[item % s.lanes.size()];
      std::lock_guard<std::mutex> lk(ln.mu);
      cudaStream_t st = ln.stream.get();
      const std::size_t ab = std::size_t(p.a.elems() * es);
      unsigned char *d0 = ln.d[0].get(), *d1 = ln.d[1].get(), *d2 = ln.d[2].get();
      GT_CUDA_CHECK(cudaEventRecord(sl.start.get(), st));
      if (direct) {
        copy_in(d0, *view, p.a, es, st);
        if (!p.diagonal()) copy_in(d1, *view, p.b, es, st);
      } else {
        GT_CUDA_CHECK(cudaMemcpyAsync(d0, ha, ab, cudaMemcpyHostToDevice, st));
        if (!p.diagonal()) GT_CUDA_CHECK(cudaMemcpyAsync(d1, hb, ab, cudaMemcpyHostToDevice, st));
      }
      GT_CUDA_CHECK(cudaEventRecord(sl.h2d.get(), st));
      // d2 = A^T (tile b's new content); then d0 = B^T (tile a's new content).
      k.launch(d0, d2, kernels::Problem{p.a.h, p.a.w, es, p.a.w, p.a.h}, st);
      if (!p.diagonal()) k.launch(d1, d0, kernels::Problem{p.b.h, p.b.w, es, p.b.w, p.b.h}, st);
      GT_CUDA_CHECK(cudaEventRecord(sl.kernel.get(), st));
      if (direct) {
        copy_out(*view, p.b, d2, es, st);
        if (!p.diagonal()) copy_out(*view, p.a, d0, es, st);
      } else if (p.diagonal()) {
        // The slot then holds new_a at ha and new_b at hb (on the diagonal,
        // the tile's transpose at ha).
        GT_CUDA_CHECK(cudaMemcpyAsync(ha, d2, ab, cudaMemcpyDeviceToHost, st));
      } else {
        GT_CUDA_CHECK(cudaMemcpyAsync(ha, d0, ab, cudaMemcpyDeviceToHost, st));
        GT_CUDA_CHECK(cudaMemcpyAsync(hb, d2, ab, cudaMemcpyDeviceToHost, st));
      }
      GT_CUDA_CHECK(cudaEventRecord(sl.done.get(), st));
      s.ring.queued(item, si);
    }
  };

  // With one writer thread, pairs go to the InplaceWriter in order, in
  // batches of up to plan.max_batch consecutive pairs already back from the
  // GPU (batching peeks at the next item: one writer thread only). A writer
  // that keeps batches (the journal) reads their slots until that many more
  // batches are written: they go back to the ring that much later.
  const std::size_t keep = std::size_t(std::max(0, w.batches_kept()));
  auto writer = [&] {
    int si;
    std::uint64_t item;
    std::vector<std::pair<std::uint64_t, int>> batch;
    std::deque<std::vector<std::pair<std::uint64_t, int>>> kept;
    std::vector<PairWrite> writes;
    while (s.ring.next(item, si)) {
      batch.assign(1, {item, si});
      GT_CUDA_CHECK(cudaEventSynchronize(s.slots[si]->done.get()));
      while (batch.size() < plan.max_batch) {
        const int nsi = s.ring.peek();
        if (nsi < 0) break;
        const cudaError_t q = cudaEventQuery(s.slots[nsi]->done.get());
        if (q == cudaErrorNotReady) break;  // not an error: that pair is still on the GPU
        GT_CUDA_CHECK(q);
        batch.emplace_back(s.ring.take_peeked(), nsi);
      }
      writes.clear();
      std::uint64_t bytes = 0;
      for (const auto& [it, sj] : batch) {
        Slot& sl = *s.slots[sj];
        const TilePair p = grid.pair(first + it);
        const std::uint64_t pb = (p.diagonal() ? 1 : 2) * p.a.elems() * es;
        s.account_gpu(sl, pb);
        bytes += pb;
        PairWrite pw;
        pw.index = first + it;
        pw.pair = p;
        pw.new_a = p.diagonal() ? nullptr : sl.buf.get();
        pw.new_b = p.diagonal() ? sl.buf.get() : sl.buf.get() + tile;
        pw.a_sum = a_sums[std::size_t(sj)];
        pw.has_a_sum = sums;
        writes.push_back(pw);
      }
      if (!direct) s.clock.timed(s.write, [&] { w.write_batch(m, writes); });
      kept.push_back(batch);
      while (kept.size() > keep) {
        for (const auto& bi : kept.front()) s.ring.release(bi.second);
        kept.pop_front();
      }
      {
        std::lock_guard<std::mutex> lk(progress_mu);  // one call at a time, in order
        std::uint64_t done;
        {
          std::lock_guard<std::mutex> lk2(s.clock.mutex());
          gpu_bytes += bytes;
          done = s.done += bytes;
        }
        if (opts.progress) opts.progress(done, total);
      }
    }
  };
  s.run(plan.readers, plan.writers, reader, writer);
  s.clock.timed(s.write, [&] { w.finish(m); });  // the matrix durable, the journal gone
  s.finish_report(r, direct ? 0 : gpu_bytes, direct ? 0 : gpu_bytes, gpu_bytes);
  return r;
}

}  // namespace gt::cuda
