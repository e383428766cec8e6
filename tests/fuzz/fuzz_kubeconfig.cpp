// Kubeconfig files (kube/src/credentials/client_config.cpp): the input as a kubeconfig, once
// with its current-context and once with the context "fuzz", and as base64 (the `*-data`
// fields' decoder). The file's directory does not exist, so the relative paths it names are
// looked up and not found; absolute ones are only checked to exist, never read.
#include <string>
#include <string_view>

#include <nodetopo/kube/client_config.hpp>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = "/nonexistent/nodetopo-fuzz/kubeconfig";
  for (const std::string_view context : {std::string_view{}, std::string_view{"fuzz"}}) {
    auto config = nodetopo::kube::parse_kubeconfig(text, path, context);
    if (!config && config.error().message.empty()) __builtin_trap();  // a refusal says why
  }
  (void)nodetopo::kube::base64_decode(text);
  return 0;
}
