# Warning and sanitizer flags shared by every nodetopo target (never by third-party code).
# -Wnull-dereference is left out: at -O2 GCC 12 reports it inside libstdc++ code inlined from
# CLI11 and nlohmann-json, which no source change of ours can silence.
add_library(nodetopo_options INTERFACE)
target_compile_options(nodetopo_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)
if(NODETOPO_WERROR)
  target_compile_options(nodetopo_options INTERFACE -Werror)
endif()
if(NODETOPO_SANITIZE)
  target_compile_options(nodetopo_options INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(nodetopo_options INTERFACE -fsanitize=address,undefined)
endif()
