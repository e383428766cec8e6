// Writing documents out: standard output with short writes detected, and atomic file replacement
// (the NFD feature file, `topo ... --output FILE`). The renderers above never do I/O; their callers
// (the CLI, the daemon) hand the rendered text to these.
#pragma once

#include <filesystem>
#include <string_view>

#include <nodetopo/base/error.hpp>

namespace nodetopo {

/// Writes `content` to standard output, failing on a short write (closed pipe, full disk).
Result<void> write_stdout(std::string_view content);

/// Replaces `path` atomically: writes a dot-file in the same directory, fsyncs it, renames it over
/// `path`. Readers (NFD, kubelet) see the old or the new content, never a partial file; on any
/// error the old file is left untouched and the temporary file removed.
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view content,
                               unsigned mode = 0644);

}  // namespace nodetopo
