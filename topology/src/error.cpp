#include <nodetopo/topology/error.hpp>

namespace nodetopo {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kPermission:
      return "permission denied";
    case ErrorCode::kMalformed:
      return "malformed";
    case ErrorCode::kEscapesRoot:
      return "escapes the host root";
    case ErrorCode::kSymlinkLoop:
      return "symlink loop";
    case ErrorCode::kIo:
      return "I/O error";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInvalid:
      return "invalid";
  }
  return "error";
}

std::string Error::describe() const {
  if (path.empty()) return message;
  return path + ": " + message;
}

}  // namespace nodetopo
