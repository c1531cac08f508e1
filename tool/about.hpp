// What the CLI says about itself (--version) and about what it was given
// that it does not know (an unknown option: "did you mean").
#pragma once
#include <string>
#include <vector>

#include "gtranspose/about.hpp"

namespace gt::tool {

// The --version text: version, HDF5, CUDA runtime and driver, the codecs
// compiled in, and whether a usable GPU was found (and why not).
std::string version_text(const char* program, const BuildInfo& b);

// The option of `known` ("--host-mem", ...) nearest to `given` ("--hostmem")
// by edit distance, where near enough to be a slip (at most a third of its
// letters, and 3); "" otherwise. A prefix match of a known name counts too.
std::string nearest_option(const std::string& given, const std::vector<std::string>& known);

// For a command line CLI11 refused: " (did you mean --host-mem?)" for the
// first argument that looks like an option (--x, --x=v) and is none of
// `known`, when one is near; "" otherwise. Arguments after "--" are files.
std::string did_you_mean(int argc, const char* const* argv, const std::vector<std::string>& known);

}  // namespace gt::tool
