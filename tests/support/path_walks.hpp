// Test parameters for code that must behave the same whichever way SysRoot walks paths.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include <nodetopo/probes/sys_root.hpp>

namespace nodetopo::test {

/// Both walks: kernel-checked opens (the default) and the user-space walk alone (kernels
/// without openat2).
inline auto all_path_walks() {
  return ::testing::Values(probes::SysRoot::PathWalk::kKernelChecked,
                           probes::SysRoot::PathWalk::kUserSpace);
}

/// Test name suffix for a walk.
inline std::string path_walk_name(
    const ::testing::TestParamInfo<probes::SysRoot::PathWalk>& param) {
  return param.param == probes::SysRoot::PathWalk::kKernelChecked ? "KernelChecked" : "UserSpace";
}

}  // namespace nodetopo::test
