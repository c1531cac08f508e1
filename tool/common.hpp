// What the programs (gtranspose, gt-gen) share: the library's errors spelled
// with their flags, the one-line failure, text made safe for a terminal, the
// --json file, and option parsing helpers. Programs hold no library logic:
// these only translate.
#pragma once
#include <optional>
#include <ostream>
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
// Prints "PROGRAM: message" on stderr, escaped (printable), and returns `code`.
int fail(const char* program, const std::string& message, int code);
int fail(const char* program, const Error& e);

// `text` safe to show on a terminal: paths and bytes from file headers can
// hold escape sequences that retitle or clear it. Printable UTF-8 stays as
// it is; C0 controls (but '\n' where kept), DEL, C1 controls and bytes that
// are not UTF-8 become \t, \r or \xNN.
std::string printable(std::string_view text, bool keep_newlines = false);
// Writes `text` (lines of a report or table) with printable(.., true).
void print_text(std::ostream& out, const std::string& text);

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& s);
// --dtype NAME; empty gives nullopt; an unknown name is gt::Error(usage).
std::optional<DType> dtype_option(const std::string& name);

// The --json report, "-" for stdout. Checked before the job starts (so a
// bad path fails while the input and output are untouched): a file gets
// what OUT gets (check_output_file: never a folder, a device, FIFO, socket
// or symbolic link; an existing file only with {force}), it must be none of
// `matrices` (the input, the output, an in-place run's journal), and its
// folder must take a new file. Written through a temporary beside it that
// replaces an existing file only with `force`, so a reader never sees half
// a file and a file that appeared meanwhile is kept.
void check_json_path(const std::string& path, const std::vector<std::string>& matrices, bool force);
void write_json(const std::string& path, const std::string& text, bool force);

}  // namespace gt::tool
