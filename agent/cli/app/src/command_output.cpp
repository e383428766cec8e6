#include <iostream>

#include <nodetopo/base/atomic_file.hpp>
#include <nodetopo/cli/app.hpp>
#include <nodetopo/cli/command_output.hpp>

namespace nodetopo::cli {

int fail(std::string_view command, const std::string& message) {
  std::cerr << "topo " << command << ": " << message << "\n";
  return kExitFailure;
}

int emit(std::string_view command, const std::string& output, const std::string& doc) {
  const Result<void> written = output.empty() ? write_stdout(doc) : write_file_atomic(output, doc);
  if (!written) return fail(command, written.error().describe());
  return kExitOk;
}

}  // namespace nodetopo::cli
