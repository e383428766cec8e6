// Whole fake roots: the input is a list of entries separated by NUL bytes, each "PATH\nCONTENT"
// (CONTENT "->TARGET" makes a symlink, "|" a FIFO), written under a fresh directory which is then
// discovered with every probe. Paths are confined to the directory (no "..", no leading "/");
// link targets are not: escaping them is what the probes must refuse.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/environment.hpp>
#include <nodetopo/probes/sys_root.hpp>

#include "fuzz_target.hpp"

namespace {

namespace fs = std::filesystem;

bool safe_path(std::string_view path) {
  if (path.empty() || path.size() > 200 || path.front() == '/') return false;
  for (char c : path) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '_' ||
                    c == '.' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return path.find("..") == std::string_view::npos;
}

void plant(const fs::path& root, std::string_view entry) {
  const std::size_t nl = entry.find('\n');
  const std::string_view path = entry.substr(0, nl);
  if (!safe_path(path)) return;
  const std::string_view content = nl == std::string_view::npos ? "" : entry.substr(nl + 1);
  const fs::path p = root / std::string(path);
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (content.starts_with("->")) {
    fs::create_symlink(std::string(content.substr(2)), p, ec);
  } else if (content == "|") {
    ::mkfifo(p.c_str(), 0644);
  } else {
    std::ofstream(p, std::ios::binary) << content;
  }
}

// The scratch directory, a plain array so that it still exists when the exit handler runs
// (static objects' destructors may already have run by then).
char g_base[4096];

void remove_base() {
  std::error_code ec;
  fs::remove_all(g_base, ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fs::path base = [] {
    nodetopo::configure_logging(spdlog::level::off, nodetopo::LogFormat::kText);
    const std::string tmpl = (fs::temp_directory_path() / "nodetopo-fuzz-XXXXXX").string();
    if (tmpl.size() >= sizeof g_base) std::abort();
    tmpl.copy(g_base, tmpl.size());
    if (::mkdtemp(g_base) == nullptr) std::abort();
    std::atexit(remove_base);  // the replay runner and libFuzzer both leave through exit()
    return fs::path(g_base);
  }();
  const fs::path root = base / "root";
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root / "sys", ec);
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t start = 0;
  for (int n = 0; start <= input.size() && n < 64; ++n) {
    const std::size_t end = std::min(input.find('\0', start), input.size());
    plant(root, input.substr(start, end - start));
    start = end + 1;
  }
  auto opened =
      nodetopo::probes::SysRoot::open(root, nodetopo::probes::SysRoot::Liveness::kCapture);
  if (opened) {
    // What topo's main does first: the process environment written for the root.
    nodetopo::probes::write_process_environment(
        nodetopo::probes::discovery_environment(opened.value(), {}));
    (void)nodetopo::probes::discover(opened.value());
  }
  fs::remove_all(root, ec);
  return 0;
}
