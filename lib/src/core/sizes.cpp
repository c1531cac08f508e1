#include "gtranspose/sizes.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "gtranspose/error.hpp"

namespace gt {

[[noreturn]] void throw_errno(ErrorKind kind, const std::string& what) {
  int e = errno;
  throw Error(kind, what + ": " + std::strerror(e), e);
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(ErrorKind::usage, std::string(what) + " overflows 64 bits");
  return r;
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw Error(ErrorKind::usage, std::string(what) + " overflows 64 bits");
  return r;
}

std::uint64_t parse_size(std::string_view text) {
  const std::string whole(text);
  auto bad = [&](const char* why) {
    return Error(ErrorKind::usage, "invalid size '" + whole + "': " + why + " (examples: 4096, 512M, 8GiB, 1.5G)");
  };
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  std::string number(text.substr(0, i));
  std::string unit(text.substr(i));
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  if (number.empty() || std::count(number.begin(), number.end(), '.') > 1) throw bad("expected a number");
  for (auto& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  unsigned shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB") shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB") shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB") shift = 30;
  else if (unit == "T" || unit == "TB" || unit == "TIB") shift = 40;
  else throw bad("unknown unit");

  if (number.find('.') == std::string::npos) {
    std::uint64_t v = 0;
    for (char c : number) {
      if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, std::uint64_t(c - '0'), &v))
        throw bad("too large");
    }
    if (shift && v > (UINT64_MAX >> shift)) throw bad("too large");
    return v << shift;
  }
  long double v = std::strtold(number.c_str(), nullptr);
  long double bytes = std::ldexp(v, int(shift));
  if (!(bytes < 18446744073709551615.0L)) throw bad("too large");
  return std::uint64_t(std::llround(bytes));
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

}  // namespace gt
