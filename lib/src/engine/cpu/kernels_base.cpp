// The baseline copy of the kernels: SSE2 on x86-64, plain loops elsewhere.
#define GT_CPU_ISA base
#define GT_CPU_AVX2 0
#include "engine/cpu/kernels_impl.hpp"
