#include <iostream>

#include <nodetopo/agent/command_output.hpp>
#include <nodetopo/agent/commands.hpp>
#include <nodetopo/base/atomic_file.hpp>

namespace nodetopo::agent {

int fail(std::string_view command, const std::string& message) {
  std::cerr << "topo " << command << ": " << message << "\n";
  return kExitFailure;
}

int emit(std::string_view command, const std::string& output, const std::string& doc) {
  const Result<void> written = output.empty() ? write_stdout(doc) : write_file_atomic(output, doc);
  if (!written) return fail(command, written.error().describe());
  return kExitOk;
}

}  // namespace nodetopo::agent
