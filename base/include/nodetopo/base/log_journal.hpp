// The systemd journal as the log sink (configure_logging(..., LogSink::kJournal), log.hpp).
//
// The journal sink needs libsystemd. Base does not link it, so that no program maps libsystemd
// and its compression and crypto libraries for logging it never sends to the journal (`topo
// dump` among them); the one program that does, the agent (agent/daemon/src/logging.cpp), makes
// the sink and hands it over here before it asks for kJournal.
#pragma once

#include <spdlog/spdlog.h>

namespace nodetopo {

/// The sink that LogSink::kJournal writes to from now on. Until one is given, kJournal keeps
/// writing to stderr (a program without libsystemd has no journal to offer).
void set_journal_sink(spdlog::sink_ptr sink);

}  // namespace nodetopo
