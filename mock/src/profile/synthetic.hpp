// The `synthetic` generator: builds the cpu, numa, pci and links sections of a profile from a
// handful of parameters (SyntheticSpec), for scale tests up to 64+ GPUs and 1000+ PCI functions.
#pragma once

#include <nodetopo/base/error.hpp>
#include <nodetopo/mock/profile.hpp>

namespace nodetopo::mock::detail {

/// Fills profile.cpu, numa, pci and links from *profile.synthetic. Errors name the parameter.
Result<void> generate_synthetic(Profile& profile);

}  // namespace nodetopo::mock::detail
