// What the programs (gtranspose, gt-gen) share: the library's errors spelled
// with their flags, the one-line failure, the --json file, and option
// parsing helpers. Programs hold no library logic: these only translate.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/types.hpp"

namespace gt::tool {

// A library parameter as the command line spells it: host_mem -> --host-mem.
std::string flag_of(std::string_view param);
// The message of `e` with every parameter spelled as a flag.
std::string message_of(const Error& e);
// Prints "PROGRAM: message" on stderr and returns `code`.
int fail(const char* program, const std::string& message, int code);
int fail(const char* program, const Error& e);

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& s);
// --dtype NAME; empty gives nullopt; an unknown name is gt::Error(usage).
std::optional<DType> dtype_option(const std::string& name);

// The --json report: checked before the job starts (so a bad path fails
// while the input and output are untouched), then written through a
// temporary beside it, so a reader never sees half a file.
void check_json_path(const std::string& path);
void write_text_file(const std::string& path, const std::string& text);

}  // namespace gt::tool
