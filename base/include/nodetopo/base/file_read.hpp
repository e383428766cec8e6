// Reading a whole configuration-like file (agent config, kubeconfig, mock profile) safely.
//
// These paths come from an operator or from a host root and may name anything: a FIFO would
// block the reader forever (the agent's start, every SIGHUP), a /dev/zero-like node would grow
// the buffer without bound. One helper so that every such reader refuses them the same way.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nodetopo/base/error.hpp>

namespace nodetopo {

/// The whole of `path` when it is a regular file of at most `max_bytes`. Opened non-blocking and
/// checked with fstat before the first read. Errors name `path` and say what the file was meant
/// to be (`what`, e.g. "agent config"): kNotFound (with sys_errno ENOENT) when it does not
/// exist, the errno's code when it cannot be opened or read, kInvalid when it is not a regular
/// file or is larger than `max_bytes`.
Result<std::string> read_regular_file(const std::string& path, std::string_view what,
                                      std::size_t max_bytes);

}  // namespace nodetopo
