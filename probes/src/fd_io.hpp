// Reading whole files from open descriptors; shared by SysRoot and SysDir.
#pragma once

#include <cstddef>
#include <string>

#include <nodetopo/topology/error.hpp>

namespace nodetopo::probes::detail {

/// Reads up to `max_bytes` from `fd` and closes it. `path` names the file in errors.
Result<std::string> read_and_close(int fd, std::size_t max_bytes, const std::string& path);

/// An Error for `errno` value `err`: "what: strerror" naming `path`.
Error errno_error(int err, const std::string& what, std::string path);

}  // namespace nodetopo::probes::detail
