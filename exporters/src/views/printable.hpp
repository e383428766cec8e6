// Text for a terminal: what a capture wrote must not drive the terminal that shows it.
#pragma once

#include <string>

namespace nodetopo::exporters::detail {

/// `text` with every byte that could act on a terminal replaced: C0 controls but newline and tab
/// (ESC starts `\e]0;title\a` and colour sequences), DEL, the C1 controls U+0080..U+009F (CSI is
/// U+009B), and bytes that are not valid UTF-8 (each becomes U+FFFD). Valid UTF-8 text passes
/// unchanged, so names in any script still print.
std::string printable(const std::string& text);

}  // namespace nodetopo::exporters::detail
