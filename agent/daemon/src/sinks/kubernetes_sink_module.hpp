// The interface between the agent and its Kubernetes sink module, nodetopo-kube-sink.so.
//
// The sink pulls in kube and libcurl, and libcurl some twenty libraries (OpenSSL, Kerberos,
// LDAP, libssh2, nghttp2, ...): about 3 MiB of resident memory in every agent, also where the
// sink is off, which is the default. So the sink is a module, loaded only when
// `kubernetes.enabled` is true. Module and agent are built together from the same headers, so
// C++ types cross the boundary; the entry point has C linkage only so that dlsym finds it by
// name. The module keeps its own copies of the static libraries it links (its version script
// exports the entry point alone); the one piece of shared state, the "kube" logger, lives in
// spdlog's registry (libspdlog), which both sides share.
#pragma once

#include <memory>

#include <nodetopo/base/error.hpp>
#include <nodetopo/daemon/config.hpp>
#include <nodetopo/daemon/sink.hpp>

/// The entry point's name, versioned: a module of another build is refused by dlsym instead of
/// being called with another layout.
#define NODETOPO_KUBE_SINK_ENTRY "nodetopo_make_kubernetes_sink_v2"

/// File name of the module (build tree: <build>/agent/daemon/; installed: <libdir>/nodetopo/).
#define NODETOPO_KUBE_SINK_MODULE "nodetopo-kube-sink.so"

extern "C" {
/// Builds the sink of `config` (and the HAMi bridge of `hami`, run by the same publisher) into
/// `*out`; defined by the module only. v2: the HAMi bridge's settings were added.
void nodetopo_make_kubernetes_sink_v2(
    const nodetopo::daemon::AgentConfig::Kubernetes* config,
    const nodetopo::daemon::AgentConfig::Hami* hami,
    nodetopo::Result<std::unique_ptr<nodetopo::daemon::Sink>>* out);

/// Its type, for dlsym: builds the sink of `config` into `*out` (credentials loaded, publisher
/// thread started).
using NodetopoMakeKubernetesSink =
    void (*)(const nodetopo::daemon::AgentConfig::Kubernetes* config,
             const nodetopo::daemon::AgentConfig::Hami* hami,
             nodetopo::Result<std::unique_ptr<nodetopo::daemon::Sink>>* out);
}
