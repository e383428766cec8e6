# Code generated at build time from committed interface files. The output goes to the build tree
# only (never committed: it must match the generator Debian ships with the library), and is
# compiled into targets of its own that do not link nodetopo_options, so -Werror and
# -Wconversion never apply to code we did not write; their include folder is SYSTEM for the
# same reason.

# nodetopo_dbus_glue(<target> XML <file> [ADAPTOR] [PROXY])
#   Runs sdbus-c++-xml2cpp (package libsdbus-c++-bin) on <file> and makes <target>, an INTERFACE
#   library whose include folder holds <basename>.adaptor.h and/or <basename>.proxy.h, and which
#   links SDBusCpp::sdbus-c++.
function(nodetopo_dbus_glue target)
  cmake_parse_arguments(ARG "ADAPTOR;PROXY" "XML" "" ${ARGN})
  if(NOT ARG_XML)
    message(FATAL_ERROR "nodetopo_dbus_glue(${target}): XML <file> is required")
  endif()
  find_package(sdbus-c++-tools REQUIRED)
  get_filename_component(xml "${ARG_XML}" ABSOLUTE)
  get_filename_component(stem "${ARG_XML}" NAME)
  string(REGEX REPLACE "\\.xml$" "" stem "${stem}")
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/generated")
  set(outputs)
  set(adaptor "")
  set(proxy "")
  if(ARG_ADAPTOR)
    set(adaptor "${out_dir}/${stem}.adaptor.h")
    list(APPEND outputs "${adaptor}")
  endif()
  if(ARG_PROXY)
    set(proxy "${out_dir}/${stem}.proxy.h")
    list(APPEND outputs "${proxy}")
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory "${out_dir}"
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:SDBusCpp::sdbus-c++-xml2cpp> -DXML=${xml}
            "-DADAPTOR=${adaptor}" "-DPROXY=${proxy}" -P "${NODETOPO_CODEGEN_DIR}/run_xml2cpp.cmake"
    DEPENDS "${xml}" "${NODETOPO_CODEGEN_DIR}/run_xml2cpp.cmake"
    COMMENT "Generating D-Bus glue for ${stem}"
    VERBATIM)
  add_custom_target(${target}_generate DEPENDS ${outputs})
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_generate)
  target_include_directories(${target} SYSTEM INTERFACE "${out_dir}")
  target_link_libraries(${target} INTERFACE SDBusCpp::sdbus-c++)
endfunction()

set(NODETOPO_CODEGEN_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL "")
