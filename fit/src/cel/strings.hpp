// Internal: UTF-8 helpers and the string extension library (cel-go ext.Strings, which the
// Kubernetes CEL environment includes): charAt, indexOf, lastIndexOf, lowerAscii, upperAscii,
// replace, split, substring, trim, join, reverse, strings.quote. Indexes count code points.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime.hpp"

namespace nodetopo::fit::cel {

bool utf8_valid(std::string_view s);
std::size_t utf8_length(std::string_view s);
std::vector<char32_t> utf8_decode(std::string_view s);
std::string utf8_encode(std::span<const char32_t> cps);

/// The ext.Strings functions; `handled` false when the name/arity/types are not one of them.
Value call_strings(std::string_view name, const Value* target, std::span<const Value> args,
                   Budget& budget, bool& handled);
/// The standard functions (functions.cpp).
Value call_standard(std::string_view name, const Value* target, std::span<const Value> args,
                    Budget& budget, bool& handled);
/// The Kubernetes libraries: quantity, semver, lists, sets, regex (k8s_library.cpp).
Value call_kubernetes(std::string_view name, const Value* target, std::span<const Value> args,
                      Budget& budget, bool& handled);

}  // namespace nodetopo::fit::cel
