// The AVX2 copy of the kernels, chosen at run time where the CPU has AVX2.
// Everything included before the target switch keeps the baseline target, so
// no shared inline function is ever compiled for AVX2.
#include "engine/cpu/kernels_api.hpp"

#if GT_CPU_X86
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

#define GT_CPU_ISA avx2
#define GT_CPU_AVX2 1
#include "engine/cpu/kernels_impl.hpp"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
