// The libFuzzer entry point every target defines. Built with -fsanitize=fuzzer (clang) it is
// driven by libFuzzer; otherwise replay_main.cpp feeds it the committed corpus, so every CI build
// runs each target over its seeds through the same code.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
