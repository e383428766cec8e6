// Sinks: where rendered documents go. The only exporter code that does I/O.
#pragma once

#include <filesystem>
#include <string_view>

#include <nodetopo/topology/error.hpp>

namespace nodetopo::exporters {

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

}  // namespace nodetopo::exporters
