// Writing documents out: standard output with short writes detected, and atomic file replacement
// (the NFD feature file, `topo ... --output FILE`). The renderers above never do I/O; their callers
// (the CLI, the daemon) hand the rendered text to these.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nodetopo/base/error.hpp>

namespace nodetopo {

/// Writes all of `content` to `fd`, going on after short writes and EINTR; `what` names the
/// file in the error.
Result<void> write_all(int fd, std::string_view content, const std::string& what);

/// Writes `content` to standard output, failing on a short write (closed pipe, full disk).
Result<void> write_stdout(std::string_view content);

/// Replaces `path` atomically: writes a dot-file in the same directory, fsyncs it, renames it over
/// `path`. Readers (NFD, kubelet) see the old or the new content, never a partial file; on any
/// error the old file is left untouched and the temporary file removed. The temporary file has
/// an unpredictable name and is created by this call (O_EXCL | O_NOFOLLOW), so nothing planted
/// in the directory is ever truncated or becomes the output.
///
/// What is at `path` is respected: "-", "/dev/stdout" and "/proc/self/fd/1" are standard output;
/// a symlink is followed and the file it names replaced (the link stays); a non-regular file (a
/// device such as /dev/null, a FIFO with a reader) is written in place, never replaced; a FIFO
/// without a reader and a directory are refused, naming the path.
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view content,
                               unsigned mode = 0644);

}  // namespace nodetopo
