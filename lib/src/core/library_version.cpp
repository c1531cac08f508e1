// The shared library's one source of its own (the areas come in whole):
// its version, for programs that load it at run time.
#include "gtranspose/version.hpp"

namespace gt {

const char* library_version() { return GT_VERSION_STRING; }

}  // namespace gt
