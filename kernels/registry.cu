#include "gtranspose/kernels.hpp"
namespace gt::kernels {
const char* kind_name(Kind k) { return k == Kind::transpose ? "transpose" : k == Kind::inplace ? "in-place" : "copy"; }
const std::vector<KernelInfo>& registry() { static std::vector<KernelInfo> r; return r; }
}
