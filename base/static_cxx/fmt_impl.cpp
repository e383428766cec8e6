// fmt's implementation, compiled from Debian's fmt headers for a program that links the C++
// libraries statically (NODETOPO_STATIC_CXX, cmake/NodetopoDependencies.cmake). Debian ships fmt
// as a shared library and headers; format-inl.h holds what the library compiles. The function
// templates that the headers declare and format-inl.h defines are instantiated here for char, the
// one character type nodetopo formats; a missing one fails the link of topo, not at run time.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template auto thousands_sep_impl(locale_ref loc) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref loc) -> char;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template void buffer<char>::append(const char* begin, const char* end);
template void vformat_to(buffer<char>& buf, string_view fmt,
                         basic_format_args<buffer_context<char>> args, locale_ref loc);

}  // namespace detail
FMT_END_NAMESPACE
