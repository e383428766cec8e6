// `topo` and the helper executables it execs into (docs/cli.md, "Executables"): what each one
// links (ELF NEEDED entries and what the dynamic linker maps), help and global options through
// the dispatch, and the message when a helper is missing.
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spawn/spawn.hpp"
#include "test_support.hpp"

namespace nodetopo::test {
namespace {

namespace fs = std::filesystem;

// The library families that must stay out of `topo` (issue 18: their loading alone cost `topo
// --version` 61 M instructions and `topo dump` 15 MiB of peak RSS). sdbus-c++ and libsystemd
// are loaded only by `--from-agent`, with the module nodetopo-agent-client.so.
const char* const kHeavy = "grpc|protobuf|absl|curl|archive|event|sdbus|systemd";

// One library per line: the NEEDED entries of `readelf -d`, or the sonames `ldd` resolves (every
// library the process will map, transitively).
std::vector<std::string> needed(const fs::path& exe) {
  const CommandResult r = run_command({"readelf", "-d", exe.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out;
  const std::regex entry(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), entry), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}
std::vector<std::string> mapped(const fs::path& exe) {
  const CommandResult r = run_command({"ldd", exe.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find("not found"), std::string::npos) << exe << ": " << line;
    std::istringstream words(line);
    std::string soname;
    if (words >> soname) out.push_back(soname);
  }
  return out;
}

// The libraries of `libs` whose name matches the alternatives in `families` ("curl|grpc").
std::vector<std::string> matching(const std::vector<std::string>& libs,
                                  const std::string& families) {
  const std::regex family("lib(" + families + ")");
  std::vector<std::string> out;
  for (const std::string& lib : libs) {
    if (std::regex_search(lib, family)) out.push_back(lib);
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v)
    out += s + " ";
  return out;
}

TEST(Executables, TopoLinksNoLibraryOfTheHeavyCommands) {
  const fs::path topo = build_dir() / "topo";
  const auto direct = needed(topo);
  // The checks read the right output: topo does need hwloc (the cpu probe).
  EXPECT_FALSE(matching(direct, "hwloc").empty()) << joined(direct);
  EXPECT_TRUE(matching(direct, kHeavy).empty()) << "NEEDED: " << joined(matching(direct, kHeavy));
  const auto all = mapped(topo);
  EXPECT_TRUE(matching(all, kHeavy).empty()) << "mapped: " << joined(matching(all, kHeavy));
}

// A root with one PCI function whose `config` holds the 64-byte header only, as a capture taken
// without root privileges has it: a host bridge (8086:1237, header type 0, no capability list).
void write_header_only_pci_root(const fs::path& root) {
  write_minimal_cpu(root);
  const fs::path dev = root / "sys/devices/pci0000:00/0000:00:00.0";
  std::string header(64, '\0');
  const unsigned char bytes[] = {
      0x86, 0x80, 0x37, 0x12, 0x07, 0x00,
      0x00, 0x00, 0x02, 0x00, 0x00, 0x06};  // ids, command, status, revision 2, class 0600
  for (std::size_t i = 0; i < sizeof bytes; ++i)
    header[i] = static_cast<char>(bytes[i]);
  write_file(dev / "config", header);
  write_file(dev / "uevent",
             "PCI_CLASS=60000\nPCI_ID=8086:1237\nPCI_SUBSYS_ID=1AF4:1100\n"
             "PCI_SLOT_NAME=0000:00:00.0\n");
  write_file(dev / "numa_node", "-1\n");
  write_file(dev / "local_cpulist", "0\n");
  make_symlink("../../../devices/pci0000:00/0000:00:00.0",
               root / "sys/bus/pci/devices/0000:00:00.0");
}

// libpci and its libz are opened by the first PCI decode that walks a capability list
// (probes/src/pci/libpci_config.hpp), so a start of topo, a dump of a root without PCI
// functions, and one of a capture whose config files hold the header alone, do not map them:
// 0.17 ms of each start on this project's VM (docs/performance.md, rounds 16 and 21).
TEST(Executables, TopoMapsLibpciOnlyWhenItDecodesConfigSpace) {
  const fs::path topo = build_dir() / "topo";
  EXPECT_TRUE(matching(needed(topo), "pci|z\\.").empty()) << joined(needed(topo));
  EXPECT_TRUE(matching(mapped(topo), "pci|z\\.").empty()) << joined(mapped(topo));
  // What the dynamic linker loads while it runs (LD_DEBUG=files: "file=libpci.so.3 [0]; dynamically
  // loaded by ..."): libpci for a root with PCI functions, nothing for one without.
  const std::string loaded = "file=libpci.so.3 [0];  dynamically loaded by";
  const auto dump_root = [&topo](const fs::path& root) {
    return run_command({topo.string(), "dump", "--format", "json", "--root", root.string()},
                       {"LD_DEBUG=files"});
  };
  TempDir dir;
  write_minimal_cpu(dir.path());
  const CommandResult bare = dump_root(dir.path());
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(bare.err.find("libpci"), std::string::npos) << bare.err;
  TempDir headers;
  write_header_only_pci_root(headers.path());
  const CommandResult header_only = dump_root(headers.path());
  EXPECT_EQ(header_only.exit_code, 0) << header_only.err;
  EXPECT_NE(header_only.out.find("\"0000:00:00.0\""), std::string::npos) << header_only.out;
  EXPECT_EQ(header_only.err.find("libpci"), std::string::npos) << header_only.err;
  const CommandResult pci =
      run_command({topo.string(), "dump", "--format", "json", "--mock", "synthetic:gpus=1,nics=1"},
                  {"LD_DEBUG=files"});
  EXPECT_EQ(pci.exit_code, 0) << pci.err;
  EXPECT_NE(pci.err.find(loaded), std::string::npos) << pci.err;
}

// Without a loadable libpci (here: the file hidden under /dev/null in a mount namespace of its own,
// as on a machine where the package was removed), a root with PCI functions whose capabilities
// must be walked is a failed PCI probe: the error names the library and its package, and the dump
// reports a degraded result (exit 1) instead of a machine without a PCI bus. A root of 64-byte
// headers never needed libpci, and dumps as usual.
TEST(Executables, TopoWithoutLibpciFailsThePciProbeNamingTheLibrary) {
  if (run_command({"unshare", "--mount", "true"}).exit_code != 0) {
    GTEST_SKIP() << "a mount namespace needs CAP_SYS_ADMIN (CI runs as root)";
  }
  const std::string script_hiding_libpci =
      "set -e\n"
      "lib=$(ldconfig -p | sed -n 's/^[[:space:]]*libpci\\.so\\.3 (.*) => //p' | head -n 1)\n"
      "test -n \"$lib\"\n"
      "mount --bind /dev/null \"$(readlink -f \"$lib\")\" || exit 77\n";
  const std::string script =
      script_hiding_libpci + "exec \"$0\" dump --format json --mock synthetic:gpus=1,nics=1\n";
  const CommandResult r = run_command({"unshare", "--mount", "--propagation", "private", "sh", "-c",
                                       script, (build_dir() / "topo").string()});
  // 77: a namespace, but no mount in it (a container's security profile may deny mounts).
  if (r.exit_code == 77) GTEST_SKIP() << "mount --bind refused: " << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("probe pci failed: libpci.so.3 cannot be loaded (Debian package libpci3)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("degraded result"), std::string::npos) << r.err;
  // A capture of 64-byte headers needs no libpci: its dump succeeds all the same.
  TempDir headers;
  write_header_only_pci_root(headers.path());
  const CommandResult header_only =
      run_command({"unshare", "--mount", "--propagation", "private", "sh", "-c",
                   script_hiding_libpci + "exec \"$0\" dump --format json --root \"$1\"\n",
                   (build_dir() / "topo").string(), headers.path().string()});
  EXPECT_EQ(header_only.exit_code, 0) << header_only.err;
  EXPECT_NE(header_only.out.find("\"0000:00:00.0\""), std::string::npos) << header_only.out;
}

// The C++ runtime and the C++ libraries topo uses (spdlog and fmt for every log line, yaml-cpp for
// YAML, RE2 for fit's matches()). With NODETOPO_STATIC_CXX they are linked into topo, and its
// dynamic linker maps C libraries only: 1.6 ms less at every start (docs/performance.md). The
// commands that use each of them run in the other suites against this same binary.
const char* const kCxx = "stdc\\+\\+|gcc_s|spdlog|fmt|yaml-cpp|re2";

TEST(Executables, TopoMapsTheCxxLibrariesOnlyWhenLinkedShared) {
  const auto all = mapped(build_dir() / "topo");
  EXPECT_FALSE(matching(all, "hwloc").empty()) << joined(all);
  if (NODETOPO_STATIC_CXX) {
    EXPECT_TRUE(matching(all, kCxx).empty()) << "mapped: " << joined(matching(all, kCxx));
  } else {
    EXPECT_EQ(matching(all, kCxx).size(), 6U) << "mapped: " << joined(matching(all, kCxx));
  }
  // The helpers link them shared, whatever the option: the agent and its modules share libspdlog's
  // one registry of loggers.
  EXPECT_FALSE(matching(mapped(build_dir() / "topo-agent"), "spdlog").empty());
}

// Linked with the C++ runtime statically, topo must define every C++ runtime symbol it uses:
// a dynamic reference to one (a C++ name, or libsupc++'s __cxa_ other than glibc's own) is left
// to a library topo does not map, which binds it to address 0 if it is weak (__cxa_pure_virtual
// was, until agent/CMakeLists.txt asked for it by name) and fails at load if not. Left out: the
// transactional-memory clones of operator new and delete (_ZGTt...), which libstdc++ refers to
// weakly on purpose, for libitm, as libc does to _ITM_registerTMCloneTable.
TEST(Executables, TopoDefinesTheCxxRuntimeItself) {
  if (!NODETOPO_STATIC_CXX) GTEST_SKIP() << "topo links the C++ runtime shared in this build";
  const CommandResult undefined =
      run_command({"nm", "-D", "--undefined-only", (build_dir() / "topo").string()});
  ASSERT_EQ(undefined.exit_code, 0) << undefined.err;
  const std::regex cxx_runtime(
      R"(\b(_Z(?!GTt)\w+|__cxa_(?!atexit\b|finalize\b|thread_atexit_impl\b)\w+))");
  std::istringstream lines(undefined.out);
  std::size_t listed = 0;
  for (std::string line; std::getline(lines, line);) {
    ++listed;
    EXPECT_FALSE(std::regex_search(line, cxx_runtime)) << line;
  }
  EXPECT_GT(listed, 10U) << undefined.out;  // libc's and libhwloc's functions at least
}

// The calls agent/prefault.cpp makes, as strace shows them: {address, length, result} of each
// madvise(MADV_POPULATE_WRITE) of one run of `argv` with `env`.
struct Fill {
  unsigned long long address = 0;
  unsigned long long length = 0;
  long result = -1;
};
std::vector<Fill> fills_of(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, std::string& out) {
  TempDir dir;
  const fs::path log = dir.path() / "strace.log";
  std::vector<std::string> traced = {"strace", "-qq", "-e", "trace=madvise", "-o", log.string()};
  traced.insert(traced.end(), argv.begin(), argv.end());
  const CommandResult r = run_command(traced, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  out = r.out;
  std::vector<Fill> fills;
  const std::string text = read_file(log);
  const std::regex call(R"(madvise\((0x[0-9a-f]+), (\d+), MADV_POPULATE_WRITE\) += (-?\d+))");
  for (std::sregex_iterator it(text.begin(), text.end(), call), end; it != end; ++it) {
    fills.push_back(
        {std::stoull((*it)[1], nullptr, 16), std::stoull((*it)[2]), std::stol((*it)[3])});
  }
  return fills;
}

// The first and last page-aligned addresses of topo's .bss, as the fill computes them from
// __bss_start and _end: the page the section starts in is left out (it holds .data's end).
std::pair<unsigned long long, unsigned long long> bss_pages(const fs::path& exe,
                                                            unsigned long long page) {
  const CommandResult r = run_command({"readelf", "-SW", exe.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::regex section(R"(\s\.bss\s+NOBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+))");
  std::smatch m;
  if (!std::regex_search(r.out, m, section)) {
    ADD_FAILURE() << "no .bss in " << r.out;
    return {0, 0};
  }
  const unsigned long long start = std::stoull(m[1], nullptr, 16);
  const unsigned long long size = std::stoull(m[2], nullptr, 16);
  const auto page_up = [page](unsigned long long a) { return (a + page - 1) & ~(page - 1); };
  return {page_up(start), page_up(start + size)};
}

// agent/prefault.cpp: topo fills in its .bss (from .preinit_array) and the rest of its heap's
// first block, at most 64 KiB (from main()), with one madvise each, and nothing when
// NODETOPO_PREFAULT=0; what it prints is the same either way. The pages filled are ones the run
// writes anyway: the kernel counts a filled page as a minor fault too, so a fill of pages the
// run would not have touched shows as extra minor faults (fewest of three runs each way).
TEST(Executables, TopoFillsItsStartPagesAhead) {
  // The kernel's page size, as the fill takes it (4 KiB on x86-64, up to 64 KiB on arm64).
  const auto page = static_cast<unsigned long long>(sysconf(_SC_PAGESIZE));
  void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
  const bool can_fill = madvise(probe, page, MADV_POPULATE_WRITE) == 0;
  munmap(probe, page);
  if (!can_fill) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  TempDir root;
  write_minimal_cpu(root.path());
  const fs::path topo = build_dir() / "topo";
  const std::vector<std::string> dump = {topo.string(), "dump",   "--format",
                                         "json",        "--root", root.path().string()};

  std::string filled_out;
  const std::vector<Fill> fills = fills_of(dump, {}, filled_out);
  ASSERT_EQ(fills.size(), 2U) << filled_out;
  const auto [bss_first, bss_end] = bss_pages(topo, page);
  EXPECT_EQ(fills[0].length, bss_end - bss_first);  // the whole .bss (the address is relocated)
  EXPECT_GT(fills[0].length, 0U);
  // The heap (the program break's) starts above the executable's .bss.
  EXPECT_LE(fills[0].address + fills[0].length, fills[1].address);
  EXPECT_GT(fills[1].length, 0U);
  EXPECT_LE(fills[1].length, 64U * 1024);
  for (const Fill& fill : fills)
    EXPECT_EQ(fill.result, 0) << std::hex << fill.address;

  std::string faulted_out;
  EXPECT_TRUE(fills_of(dump, {"NODETOPO_PREFAULT=0"}, faulted_out).empty());
  EXPECT_EQ(filled_out, faulted_out);
  EXPECT_NE(filled_out.find("\"package/0\""), std::string::npos) << filled_out;

  const auto fewest_faults = [&dump](const std::vector<std::string>& env) {
    long fewest = -1;
    for (int i = 0; i < 3; ++i) {
      spawn::ChildOptions options;
      options.env = env;
      const spawn::ChildResult r = spawn::run(dump, options);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      if (fewest < 0 || r.minor_faults < fewest) fewest = r.minor_faults;
    }
    return fewest;
  };
  const long filled = fewest_faults({});
  const long faulted = fewest_faults({"NODETOPO_PREFAULT=0"});
  EXPECT_LE(filled, faulted + 16) << "pages filled but never used: " << filled - faulted;
}

TEST(Executables, EachHelperMapsItsOwnLibrariesOnly) {
  struct Case {
    const char* exe;
    const char* needs;     // a family it must map (proves the listing)
    const char* must_not;  // families it must not map
  };
  const Case cases[] = {
      {"topo-capture", "archive", "curl|grpc|protobuf|absl|event"},
      {"topo-cleanup", "curl", "grpc|protobuf|absl|archive|event|hwloc|pci"},
      // The plugin reads its claims and publishes ResourceSlices through kube (libcurl).
      {"topo-kubelet-plugin", "grpc", "archive|event"},
      {"topo-agent", "event", "grpc|protobuf|absl|archive|curl"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.exe);
    const auto all = mapped(build_dir() / c.exe);
    EXPECT_FALSE(matching(all, c.needs).empty()) << joined(all);
    EXPECT_TRUE(matching(all, c.must_not).empty()) << joined(matching(all, c.must_not));
  }
}

// Full RELRO (CMakeLists.txt): every executable and module binds its symbols at load (BIND_NOW)
// and has a GNU_RELRO segment, which the dynamic linker makes read-only after relocating.
TEST(Executables, EveryExecutableAndModuleHasFullRelro) {
  const char* const files[] = {"topo",
                               "topo-capture",
                               "topo-cleanup",
                               "topo-kubelet-plugin",
                               "topo-agent",
                               "agent/daemon/nodetopo-kube-sink.so",
                               "agent/daemon/nodetopo-agent-client.so",
                               "mock/nvml/libnvidia-ml.so"};
  const std::regex bind_now(R"(\(FLAGS\)\s+.*\bBIND_NOW\b|\(FLAGS_1\)\s+Flags:.*\bNOW\b)");
  for (const char* file : files) {
    SCOPED_TRACE(file);
    const fs::path path = build_dir() / file;
    ASSERT_TRUE(fs::exists(path)) << path;
    const CommandResult dynamic = run_command({"readelf", "-d", path.string()});
    ASSERT_EQ(dynamic.exit_code, 0) << dynamic.err;
    EXPECT_TRUE(std::regex_search(dynamic.out, bind_now)) << dynamic.out;
    const CommandResult segments = run_command({"readelf", "-lW", path.string()});
    ASSERT_EQ(segments.exit_code, 0) << segments.err;
    EXPECT_NE(segments.out.find("GNU_RELRO"), std::string::npos) << segments.out;
  }
}

TEST(Executables, HelpListsEveryCommandAndEachCommandsHelpIsItsOwn) {
  const fs::path topo = build_dir() / "topo";
  const CommandResult all = run_command({topo.string(), "--help"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  struct Case {
    const char* command;
    const char* described;  // words of its description in `topo --help`
    const char* option;     // an option only its own help shows
  };
  const Case cases[] = {
      {"capture", "Pack the files one discovery", "--output"},
      {"cleanup", "Remove what the agent published", "--kubeconfig"},
      {"kubelet-plugin", "Run the DRA kubelet plugin", "--plugins-dir"},
      {"agent", "Run the long-running node agent", "--check-config"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    EXPECT_NE(all.out.find(std::string("  ") + c.command), std::string::npos) << all.out;
    EXPECT_NE(all.out.find(c.described), std::string::npos) << all.out;
    const CommandResult own = run_command({topo.string(), c.command, "--help"});
    EXPECT_EQ(own.exit_code, 0) << own.err;
    EXPECT_NE(own.out.find(c.option), std::string::npos) << own.out;
    EXPECT_NE(own.out.find(c.described), std::string::npos) << own.out;
  }
}

TEST(Executables, GlobalOptionsBeforeTheCommandReachTheHelper) {
  TempDir dir;
  const fs::path out = dir.path() / "c.tar.gz";
  const CommandResult r =
      run_command({(build_dir() / "topo").string(), "--log-level=debug", "--log-format", "json",
                   "capture", "--mock", "synthetic:gpus=1,nics=1", "-o", out.string()},
                  {"TMPDIR=" + dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(out));
  // The helper's discovery logged at debug level, as JSON lines.
  EXPECT_NE(r.err.find(R"("level":"debug","logger":"discovery")"), std::string::npos) << r.err;
  // A bad global option is the same usage error before a helper's command as before dump's.
  const CommandResult bad =
      run_command({(build_dir() / "topo").string(), "--log-level", "loud", "capture", "--help"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("loud"), std::string::npos) << bad.err;
}

TEST(Executables, MissingOrBrokenHelperIsAClearFailureNamingThePaths) {
  // topo alone, as after a partial copy or a damaged installation.
  TempDir dir;
  const fs::path bin = dir.path() / "bin";
  fs::create_directories(bin);
  fs::copy_file(build_dir() / "topo", bin / "topo");
  const std::string topo = (bin / "topo").string();
  const CommandResult help = run_command({topo, "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("capture"), std::string::npos) << help.out;

  const CommandResult missing = run_command({topo, "capture", "--help"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(missing.out.empty()) << missing.out;
  for (const std::string& part :
       {std::string("cannot run topo-capture"), (bin / "topo-capture").string() + ": not found",
        (dir.path() / "libexec/nodetopo/topo-capture").string() + ": not found",
        std::string("reinstall the nodetopo package")}) {
    EXPECT_NE(missing.err.find(part), std::string::npos) << part << " missing from\n"
                                                         << missing.err;
  }

  // Present but not executable; executable but not a program: each path with its reason.
  write_file(bin / "topo-cleanup", "not a program\n");
  fs::permissions(bin / "topo-cleanup", fs::perms::owner_read | fs::perms::owner_write);
  const CommandResult denied = run_command({topo, "--log-level", "debug", "cleanup"});
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_NE(denied.err.find((bin / "topo-cleanup").string() + ": Permission denied"),
            std::string::npos)
      << denied.err;
  fs::permissions(bin / "topo-cleanup", fs::perms::owner_all);
  const CommandResult broken = run_command({topo, "cleanup"});
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_NE(broken.err.find((bin / "topo-cleanup").string() + ": Exec format error"),
            std::string::npos)
      << broken.err;
}

TEST(Executables, FromAgentWithoutTheClientModuleIsAClearFailure) {
  // The module is found beside the build tree's topo (the --from-agent tests use it); a missing
  // one is named, with what to do, and nothing is printed on stdout.
  const CommandResult r =
      run_command({(build_dir() / "topo").string(), "dump", "--from-agent", "--bus", "session"},
                  {"NODETOPO_AGENT_CLIENT_MODULE_PATH=/nonexistent/nodetopo-agent-client.so"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("nodetopo-agent-client.so is not installed (looked for "
                       "/nonexistent/nodetopo-agent-client.so): reinstall the nodetopo package"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace nodetopo::test
