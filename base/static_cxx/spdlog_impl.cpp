// spdlog's implementation, compiled from Debian's spdlog headers for a program that links the C++
// libraries statically (NODETOPO_STATIC_CXX, cmake/NodetopoDependencies.cmake). Debian ships
// spdlog as a shared library and headers; its headers hold the whole implementation (the -inl.h
// files), which a compiled-library build puts in one translation unit, as this one does. The
// declarations every other file sees are those of the shared library (SPDLOG_COMPILED_LIB), so
// the same objects link against either.
#ifndef SPDLOG_COMPILED_LIB
#error "compiled with the definitions of spdlog::spdlog (SPDLOG_COMPILED_LIB)"
#endif

#include <mutex>

#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

// The class templates whose members live in the -inl.h files, for the mutexes nodetopo uses:
// stderr_sink_mt (base/src/log.cpp), base_sink (the journal sink) and the colour stdout sink of
// the registry's default logger, which nodetopo replaces but the registry's constructor builds.
template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::base_sink<spdlog::details::null_mutex>;
template class spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>;
template class spdlog::sinks::stderr_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::stdout_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
