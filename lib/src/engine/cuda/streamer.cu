#include "engine/cuda/streamer.cuh"

#include <algorithm>

#include "gtranspose/error.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::cuda {

namespace {

std::string lanes_text(const RunPlan& p) {
  return std::to_string(p.lanes) + " lane" + (p.lanes > 1 ? "s" : "") + " of " + format_bytes(p.device_buffer_bytes) +
         " tiles";
}

}  // namespace

Streamer::~Streamer() {
  quiesce();
  for (auto& sl : slots) pool_.give(std::move(sl->buf));
}

RunPlan Streamer::allocate_device(RunPlan plan) {
  const RunPlan wanted = plan;
  while (!allocate_lanes(lanes, plan.lanes, plan.device_buffers, std::size_t(plan.device_buffer_bytes))) {
    std::optional<RunPlan> smaller = plan_smaller(plan);
    if (!smaller) {
      std::size_t free_b = 0, total_b = 0;
      GT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      throw Error(ErrorKind::cuda,
                  "out of GPU memory: " + std::to_string(plan.device_buffers) + " buffers of " +
                      format_bytes(plan.device_buffer_bytes) + " do not fit in the " + format_bytes(free_b) +
                      " free; " +
                      (plan.request.resumed_block ? "the interrupted run's tiles cannot shrink: free the GPU"
                                                  : "free the GPU or give a smaller {device_mem}"));
    }
    plan = std::move(*smaller);
  }
  if (plan.device_buffer_bytes != wanted.device_buffer_bytes || plan.lanes != wanted.lanes)
    notes_.push_back("the GPU had too little free memory for " + lanes_text(wanted) + ": shrunk to " +
                     lanes_text(plan));
  ref_.emplace();
  GT_CUDA_CHECK(cudaEventRecord(ref_->get(), lanes[0]->stream.get()));
  ring.set_items(plan.tiles - plan.first_pair);
  return plan;
}

void Streamer::allocate_slots(const RunPlan& plan) {
  const int count = plan.slots;
  const std::size_t bytes = std::size_t(plan.slot_bytes);
  pool_.trim(bytes, std::size_t(count));
  for (int i = 0; i < count; ++i) slots.push_back(std::make_unique<Slot>());
  if (bytes) {
    const cudaError_t e = pool_.take(bytes, slots[0]->buf);
    if (e != cudaSuccess)
      throw Error(ErrorKind::cuda, "cannot pin " + format_bytes(bytes) + " of host memory for staging: " +
                                       cudaGetErrorString(e) + " (give a smaller {host_mem}, or raise ulimit -l)");
  }
  ring.add_slot(0);
  if (count == 1) return;
  pinner_ = std::thread([this, count, bytes] {
    for (int i = 1; i < count && !ring.aborted(); ++i) {
      if (bytes && pool_.take(bytes, slots[i]->buf) != cudaSuccess) {
        std::lock_guard<std::mutex> lk(clock.mutex());
        notes_.push_back("could pin only " + std::to_string(i) + " staging buffers of " + format_bytes(bytes));
        return;
      }
      ring.add_slot(i);
    }
  });
}

void Streamer::account_gpu(Slot& s, std::uint64_t bytes) {
  float a = 0, b = 0, c = 0, d = 0;
  GT_CUDA_CHECK(cudaEventElapsedTime(&a, ref_->get(), s.start.get()));
  GT_CUDA_CHECK(cudaEventElapsedTime(&b, ref_->get(), s.h2d.get()));
  GT_CUDA_CHECK(cudaEventElapsedTime(&c, ref_->get(), s.kernel.get()));
  GT_CUDA_CHECK(cudaEventElapsedTime(&d, ref_->get(), s.done.get()));
  std::lock_guard<std::mutex> lk(clock.mutex());
  h2d.add(a / 1e3, b / 1e3);
  kernel.add(b / 1e3, c / 1e3);
  d2h.add(c / 1e3, d / 1e3);
  if (c > b) kernel_rates_.push_back(2.0 * double(bytes) / ((c - b) / 1e3));
}

void Streamer::quiesce() noexcept {
  if (pinner_.joinable()) {
    ring.fail(nullptr);  // harmless after a clean run: every wait is over
    pinner_.join();
  }
  // Errors here are the run's own (a failed copy), already reported or
  // about to be: what matters is that nothing is in flight any more.
  for (auto& l : lanes) cudaStreamSynchronize(l->stream.get());
  cudaGetLastError();
}

void Streamer::finish_report(RunReport& r, std::uint64_t read_bytes, std::uint64_t write_bytes,
                             std::uint64_t gpu_bytes) {
  const double wall = clock.now();
  if (read_bytes) set_stage(r, "read", read, read_bytes);
  set_stage(r, "h2d", h2d, gpu_bytes);
  set_stage(r, "kernel", kernel, 2 * gpu_bytes);
  set_stage(r, "d2h", d2h, gpu_bytes);
  if (write_bytes) set_stage(r, "write", write, write_bytes);
  // The kernel's own rate: the median tile's, timed by events around its
  // launch in its lane (a tile's interval also holds any wait for another
  // lane's work on the GPU, so the median, not the sum, says what the
  // kernel does).
  if (!kernel_rates_.empty()) {
    std::nth_element(kernel_rates_.begin(), kernel_rates_.begin() + kernel_rates_.size() / 2, kernel_rates_.end());
    r.kernel_gbps = kernel_rates_[kernel_rates_.size() / 2] / 1e9;
  }
  std::uint64_t staged = 0;
  for (const auto& s : slots) staged += s->buf.size();
  r.host_buffers = staged;
  for (auto& n : notes_) r.notes.push_back(n);
  end_report(r, wall);
}

void copy_in(void* d, const HostView& v, const Tile& t, std::size_t es, cudaStream_t st) {
  const auto* src = static_cast<const unsigned char*>(v.data) + (t.r0 * v.ld + t.c0) * es;
  GT_CUDA_CHECK(cudaMemcpy2DAsync(d, t.w * es, src, v.ld * es, t.w * es, t.h, cudaMemcpyHostToDevice, st));
}

void copy_out(const HostView& v, const Tile& t, const void* d, std::size_t es, cudaStream_t st) {
  auto* dst = static_cast<unsigned char*>(v.data) + (t.r0 * v.ld + t.c0) * es;
  GT_CUDA_CHECK(cudaMemcpy2DAsync(dst, v.ld * es, d, t.w * es, t.w * es, t.h, cudaMemcpyDeviceToHost, st));
}

}  // namespace gt::cuda
