// str_cat / str_append: strings built by appending their pieces.
//
// Why not `"(" + s + ")"`: GCC 12 at -O2 inlines libstdc++'s operator+(const char*, string&&)
// (an insert at position 0) and then reports a false -Wrestrict overlap in memcpy, about twenty
// times over this code base. Appending never takes that path, and reserves once.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nodetopo {

namespace detail {
inline void append_piece(std::string& out, std::string_view piece) {
  out.append(piece);
}
inline void append_piece(std::string& out, char piece) {
  out.push_back(piece);
}
inline std::size_t piece_size(std::string_view piece) {
  return piece.size();
}
inline std::size_t piece_size(char /*piece*/) {
  return 1;
}
}  // namespace detail

/// Appends every piece (strings, string views, literals, single characters) to `out`.
template <class... Pieces>
void str_append(std::string& out, const Pieces&... pieces) {
  out.reserve(out.size() + (detail::piece_size(pieces) + ... + 0));
  (detail::append_piece(out, pieces), ...);
}

/// The pieces joined: str_cat("x", std::to_string(width)).
template <class... Pieces>
[[nodiscard]] std::string str_cat(const Pieces&... pieces) {
  std::string out;
  str_append(out, pieces...);
  return out;
}

}  // namespace nodetopo
