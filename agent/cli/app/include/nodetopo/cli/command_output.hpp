// What every command does at its end: report a failure, or write its document.
#pragma once

#include <string>
#include <string_view>

namespace nodetopo::cli {

/// Prints "topo <command>: <message>" on stderr and returns kExitFailure.
int fail(std::string_view command, const std::string& message);

/// Writes `doc` to stdout, or atomically to `output` when it is not empty (temporary file in the
/// same directory, then rename). Returns kExitOk, or reports the error naming the path.
int emit(std::string_view command, const std::string& output, const std::string& doc);

}  // namespace nodetopo::cli
