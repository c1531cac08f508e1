// Byte sizes on the command line: "512", "64K", "1.5G", "8GiB", "256MiB".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace gt {

// K/M/G/T and KB/MB/GB/TB are binary here too (1K = 1024), like dd and zstd;
// KiB/MiB/GiB/TiB are accepted as well. Throws gt::Error (usage) on a
// malformed value, a negative one, or one that overflows 64 bits.
[[nodiscard]] std::uint64_t parse_size(std::string_view text);
// "1.50 GiB", "512 B" ...
std::string format_bytes(std::uint64_t bytes);

// Checked 64-bit arithmetic: throws gt::Error(internal/usage) on overflow.
[[nodiscard]] std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what);
[[nodiscard]] std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what);

}  // namespace gt
