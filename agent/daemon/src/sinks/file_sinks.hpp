// The file sinks: the NFD feature file and the JSON snapshot.
#pragma once

#include <memory>
#include <string>

#include <nodetopo/daemon/sink.hpp>

namespace nodetopo::daemon {

/// NFD's features.d file: `nodetopo.dev/<name>=<value>` lines (topo export labels --format nfd)
/// without an expiry, so it needs no rewrite to stay valid.
std::unique_ptr<Sink> make_nfd_sink(std::string path);

/// The JSON model (topo dump --format json), for local consumers that read a file.
std::unique_ptr<Sink> make_json_sink(std::string path);

}  // namespace nodetopo::daemon
