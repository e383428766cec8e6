#include <cerrno>
#include <cstring>

#include <nodetopo/base/error.hpp>

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
  std::string out;
  for (auto it = context.rbegin(); it != context.rend(); ++it) {
    out += *it;
    out += " <- ";
  }
  if (!path.empty()) {
    out += path;
    out += ": ";
  }
  out += message;
  return out;
}

ErrorClass class_of_errno(int err) {
  switch (err) {
    case EAGAIN:
    case EINTR:
    case EBUSY:
    case ETIMEDOUT:
      return ErrorClass::kTransient;
    default:
      return ErrorClass::kPermanent;
  }
}

Error errno_error(int err, std::string_view what, std::string path) {
  ErrorCode code = ErrorCode::kIo;
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      code = ErrorCode::kNotFound;
      break;
    case EACCES:
    case EPERM:
      code = ErrorCode::kPermission;
      break;
    case ELOOP:
      code = ErrorCode::kSymlinkLoop;
      break;
    default:
      break;
  }
  Error e = make_error(code, std::string(what) + ": " + std::strerror(err), std::move(path));
  e.sys_errno = err;
  e.error_class = class_of_errno(err);
  return e;
}

}  // namespace nodetopo
