// Small ASCII string helpers that several layers had each written for themselves: the byte
// rules of configuration files, sysfs text and Kubernetes names are ASCII, so none of these
// consult the locale (std::tolower and std::isspace are called in the "C" sense, on unsigned
// bytes; UTF-8 bytes above 0x7f pass through unchanged).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nodetopo {

/// `s` with ASCII letters lower-cased ("GiB" -> "gib", "Node-1" -> "node-1").
std::string ascii_lower(std::string_view s);

/// `s` without leading and trailing white space (space, \t, \n, \v, \f, \r). A view into `s`.
std::string_view trim(std::string_view s);

/// The parts of `s` between each `sep`, empty parts kept: "a..b" -> {"a", "", "b"}, "" -> {""}.
/// Views into `s`.
std::vector<std::string_view> split(std::string_view s, char sep);

}  // namespace nodetopo
