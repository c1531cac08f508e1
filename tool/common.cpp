#include "common.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "gtranspose/format.hpp"
#include "gtranspose/tempfile.hpp"

namespace gt::tool {

std::string flag_of(std::string_view param) {
  std::string f = "--" + std::string(param);
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::string message_of(const Error& e) { return e.render(flag_of); }

int fail(const char* program, const std::string& message, int code) {
  std::cerr << program << ": " << printable(message) << "\n";
  return code;
}

int fail(const char* program, const Error& e) { return fail(program, message_of(e), e.exit_code()); }

namespace {

// The length of the UTF-8 sequence at s[i], 0 when none starts there.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const std::size_t n = b >= 0xf0 && b < 0xf5 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
  if (!n || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if ((b == 0xe0 && b1 < 0xa0) || (b == 0xed && b1 >= 0xa0) || (b == 0xf0 && b1 < 0x90) || (b == 0xf4 && b1 >= 0x90))
    return 0;  // overlong, surrogate, or past U+10FFFF
  return n;
}

}  // namespace

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c >= 0x20 && c < 0x7f) || (c == '\n' && keep_newlines)) {
      out += char(c);
      ++i;
      continue;
    }
    const std::size_t n = c >= 0x80 ? utf8_length(text, i) : 0;
    // U+0080..U+009F (C2 80..C2 9F) are C1 controls: CSI among them.
    const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0;
    if (n && !c1) {
      out.append(text, i, n);
      i += n;
      continue;
    }
    const unsigned char shown = c1 ? static_cast<unsigned char>(text[i + 1]) : c;
    char buf[8];
    if (c == '\t') std::snprintf(buf, sizeof buf, "\\t");
    else if (c == '\r') std::snprintf(buf, sizeof buf, "\\r");
    else if (c == '\n') std::snprintf(buf, sizeof buf, "\\n");
    else std::snprintf(buf, sizeof buf, "\\x%02x", shown);
    out += buf;
    i += c1 ? 2 : 1;
  }
  return out;
}

void print_text(std::ostream& out, const std::string& text) { out << printable(text, true) << std::flush; }

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(',', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::optional<DType> dtype_option(const std::string& name) {
  if (name.empty()) return std::nullopt;
  const std::optional<DType> t = parse_dtype(name);
  if (!t) throw Error(ErrorKind::usage, "unknown {dtype} '" + name + "': use one of " + dtype_names());
  return t;
}

void check_json_path(const std::string& path, const std::vector<std::string>& matrices, bool force) {
  if (path == "-") return;
  for (const auto& m : matrices)
    if (!m.empty() && same_file(path, m))
      throw Error(ErrorKind::usage, "{json} " + path + " names " + m +
                                        ", which this run reads or writes: name another file for the report");
  try {
    check_output_file(path, force);
  } catch (const Error& e) {
    throw Error(e.kind(), "{json}: " + e.message());
  }
  TempPath probe(path);
  const int fd = ::open(probe.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno(ErrorKind::output, "cannot create the {json} file " + path);
  ::close(fd);
}

void write_json(const std::string& path, const std::string& text, bool force) {
  if (path == "-") {
    std::cout << text << std::flush;
    if (!std::cout) throw Error(ErrorKind::output, "cannot write the {json} report to stdout");
    return;
  }
  TempPath tmp(path, force ? Replace::yes : Replace::no);
  std::ofstream f(tmp.path(), std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.flush()) throw_errno(ErrorKind::output, "cannot write the {json} file " + path);
  f.close();
  tmp.commit();
}

}  // namespace gt::tool
