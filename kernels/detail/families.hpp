// The registry entry of every kernel, one getter per kernel, defined in the
// family's file (copy.cu, naive.cu, serial.cu, tiled.cu, smem.cu, padded.cu,
// inplace.cu, inplace_rect.cu). registry.cu lists them in display order.
#pragma once
#include <cstddef>
#include <vector>

#include "gtranspose/kernel_tuning.hpp"
#include "gtranspose/kernels.hpp"

namespace gt::kernels::detail {

KernelInfo copy_info();
KernelInfo copy_col_info();
KernelInfo naive_row_info();
KernelInfo naive_col_info();
KernelInfo unroll4_row_info();
KernelInfo unroll4_col_info();
KernelInfo row_per_thread_info();
KernelInfo single_thread_info();
KernelInfo tiled_info();
KernelInfo smem_info();
KernelInfo unrolled_info();
KernelInfo diagonal_info();
KernelInfo smem_unroll_pad_dyn_info();
KernelInfo padded_info();
KernelInfo inplace_swap_info();
KernelInfo inplace_tiled_info();
KernelInfo inplace_rect_info();

// The alternative tilings of the tuned kernels (kernel_tuning.hpp).
std::vector<Variant> padded_tuning_variants(std::size_t elem_size);
std::vector<Variant> inplace_tuning_variants(std::size_t elem_size);

}  // namespace gt::kernels::detail
