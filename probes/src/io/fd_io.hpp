// Reading whole files from open descriptors; shared by SysRoot and SysDir.
#pragma once

#include <cstddef>
#include <string>

#include <nodetopo/base/error.hpp>

namespace nodetopo::probes::detail {

/// Reads up to `max_bytes` from `fd`, leaving it open; the error carries no path.
Result<std::string> read_all(int fd, std::size_t max_bytes);

/// read_and_close() whose error carries no path.
Result<std::string> read_and_close_unnamed(int fd, std::size_t max_bytes);

/// Reads up to `max_bytes` from `fd` and closes it. `path` names the file in errors; it is only
/// called on error (building the name of every file read cost more than reading most of them).
template <class PathFn>
Result<std::string> read_and_close(int fd, std::size_t max_bytes, PathFn&& path) {
  auto content = read_and_close_unnamed(fd, max_bytes);
  if (!content) {
    Error e = content.error();
    e.path = path();
    return e;
  }
  return content;
}

/// An Error for `errno` value `err`: "what: strerror" naming `path`.
Error errno_error(int err, const std::string& what, std::string path);

}  // namespace nodetopo::probes::detail
