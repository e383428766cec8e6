# Every dependency is a Debian package (see scripts/install-deps.sh); nothing is fetched or vendored.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2.0)
pkg_check_modules(LIBPCI REQUIRED IMPORTED_TARGET libpci>=3.8)
# base: the journald log sink (spdlog's systemd_sink calls sd_journal_send)
pkg_check_modules(LIBSYSTEMD REQUIRED IMPORTED_TARGET libsystemd>=252)
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive>=3.6)  # topo capture
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(Threads REQUIRED)
# topo agent (agent/daemon): sd-event/sd-daemon, the D-Bus library, the HTTP server.
pkg_check_modules(LIBSYSTEMD REQUIRED IMPORTED_TARGET libsystemd>=247)
find_package(sdbus-c++ 1.2 REQUIRED)
# libevent_core + libevent_extra (evhttp): no TLS library behind it, unlike libmicrohttpd (GnuTLS).
pkg_check_modules(LIBEVENT REQUIRED IMPORTED_TARGET libevent_core>=2.1 libevent_extra>=2.1)
find_package(CURL 7.77 REQUIRED)  # kube: the API client (CURLOPT_*_BLOB for inline certificates)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)  # fit: CEL's matches()

# The C++ libraries, through targets of our own that say how each program links them. Every
# object is compiled against the shared libraries' declarations. A program whose
# NODETOPO_STATIC_CXX property is ON (topo, with the option of that name) then links yaml-cpp and
# RE2 from their Debian archives, spdlog and fmt from base/static_cxx (Debian has no archive of
# them) and the C++ runtime statically: its dynamic linker maps only C libraries, which takes
# 1.6 ms off each start (docs/performance.md, "Start-up"). Every other program, and every module,
# links the shared libraries, so the agent and its modules share one spdlog registry.
add_library(nodetopo_fmt INTERFACE)
add_library(nodetopo_spdlog INTERFACE)
add_library(nodetopo_yaml_cpp INTERFACE)
add_library(nodetopo_re2 INTERFACE)
if(NODETOPO_STATIC_CXX)
  find_library(NODETOPO_YAML_CPP_ARCHIVE NAMES libyaml-cpp.a REQUIRED)
  find_library(NODETOPO_RE2_ARCHIVE NAMES libre2.a REQUIRED)
  set(static_head "$<BOOL:$<TARGET_PROPERTY:NODETOPO_STATIC_CXX>>")
  # nodetopo_cxx_library(<ours> <imported> <static item>): <imported>'s compile requirements,
  # and as link item either <imported> or <static item>, by the program being linked.
  function(nodetopo_cxx_library ours imported static_item)
    foreach(property INTERFACE_COMPILE_DEFINITIONS INTERFACE_COMPILE_OPTIONS
                     INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_FEATURES)
      get_target_property(value ${imported} ${property})
      if(value)
        set_property(TARGET ${ours} APPEND PROPERTY ${property} ${value})
      endif()
    endforeach()
    target_link_libraries(${ours} INTERFACE "$<IF:${static_head},${static_item},${imported}>")
  endfunction()
  nodetopo_cxx_library(nodetopo_fmt fmt::fmt nodetopo_static_cxx)
  nodetopo_cxx_library(nodetopo_spdlog spdlog::spdlog nodetopo_static_cxx)
  target_link_libraries(nodetopo_spdlog INTERFACE nodetopo_fmt Threads::Threads)
  nodetopo_cxx_library(nodetopo_yaml_cpp yaml-cpp ${NODETOPO_YAML_CPP_ARCHIVE})
  nodetopo_cxx_library(nodetopo_re2 PkgConfig::RE2 ${NODETOPO_RE2_ARCHIVE})
  target_link_libraries(nodetopo_re2 INTERFACE Threads::Threads)
else()
  target_link_libraries(nodetopo_fmt INTERFACE fmt::fmt)
  target_link_libraries(nodetopo_spdlog INTERFACE spdlog::spdlog)
  target_link_libraries(nodetopo_yaml_cpp INTERFACE yaml-cpp)
  target_link_libraries(nodetopo_re2 INTERFACE PkgConfig::RE2)
endif()
if(NODETOPO_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(NODETOPO_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
