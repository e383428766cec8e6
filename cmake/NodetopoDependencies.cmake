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
find_package(simdjson 3.0 REQUIRED)  # the mock NVML library's fixture parser only
find_package(CLI11 2.1 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(Threads REQUIRED)
# topo agent (agent/daemon): sd-event/sd-daemon, the D-Bus library, the HTTP server.
pkg_check_modules(LIBSYSTEMD REQUIRED IMPORTED_TARGET libsystemd>=247)
find_package(sdbus-c++ 1.2 REQUIRED)
# libevent_core + libevent_extra (evhttp): no TLS library behind it, unlike libmicrohttpd (GnuTLS).
pkg_check_modules(LIBEVENT REQUIRED IMPORTED_TARGET libevent_core>=2.1 libevent_extra>=2.1)
find_package(CURL 7.77 REQUIRED)  # kube: the API client (CURLOPT_*_BLOB for inline certificates)
if(NODETOPO_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(NODETOPO_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
