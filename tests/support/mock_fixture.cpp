#include "mock_fixture.hpp"

#include <algorithm>
#include <chrono>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nodetopo/mock/profiles.hpp>

#include "test_support.hpp"

namespace nodetopo::test {

namespace fs = std::filesystem;

namespace {

struct HostCache {
  TempDir dir;
  std::map<std::string, std::unique_ptr<BuiltHost>> hosts;
  std::map<std::string, std::unique_ptr<RenderedHost>> rendered;
};

HostCache& cache() {
  static HostCache c;
  return c;
}

}  // namespace

const BuiltHost* built_host(const std::string& spec) {
  HostCache& c = cache();
  if (auto it = c.hosts.find(spec); it != c.hosts.end()) return it->second.get();
  auto profile = mock::load_profile(spec);
  if (!profile) {
    ADD_FAILURE() << "profile " << spec << ": " << profile.error().describe();
    return nullptr;
  }
  auto host = std::make_unique<BuiltHost>();
  std::string dirname = spec;
  std::replace_if(
      dirname.begin(), dirname.end(), [](char ch) { return ch == ':' || ch == '/' || ch == ','; },
      '_');
  host->root = c.dir.path() / dirname;
  const auto start = std::chrono::steady_clock::now();
  auto built = mock::build_host(*profile, host->root);
  host->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!built) {
    ADD_FAILURE() << "building " << spec << ": " << built.error().describe();
    return nullptr;
  }
  host->summary = *built;
  host->manifest = nlohmann::json::parse(read_file(host->root / "nodetopo-mock/manifest.json"));
  return c.hosts.emplace(spec, std::move(host)).first->second.get();
}

std::string RenderedHost::attr(const std::string& rel) const {
  auto it = image.files.find(rel);
  if (it == image.files.end()) {
    ADD_FAILURE() << "no file " << rel;
    return {};
  }
  std::string text = it->second;
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

std::string RenderedHost::link(const std::string& rel) const {
  auto it = image.symlinks.find(rel);
  if (it == image.symlinks.end()) {
    ADD_FAILURE() << "no symlink " << rel;
    return {};
  }
  return it->second;
}

std::string RenderedHost::resolve(const std::string& rel) const {
  std::vector<std::string> done;
  std::vector<std::string> todo;
  auto push_path = [&todo](const std::string& path) {
    std::vector<std::string> parts;
    std::istringstream in(path);
    std::string part;
    while (std::getline(in, part, '/')) {
      if (!part.empty()) parts.push_back(part);
    }
    todo.insert(todo.begin(), parts.begin(), parts.end());
  };
  push_path(rel);
  for (int hops = 0; !todo.empty(); ++hops) {
    if (hops > 1000) return {};
    const std::string part = todo.front();
    todo.erase(todo.begin());
    if (part == ".") continue;
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(part);
    std::string joined;
    for (const std::string& d : done)
      joined += (joined.empty() ? "" : "/") + d;
    if (auto it = image.symlinks.find(joined); it != image.symlinks.end()) {
      done.pop_back();
      push_path(it->second);
      continue;
    }
    if (image.files.count(joined) == 0 && image.dirs.count(joined) == 0) return {};
  }
  std::string out;
  for (const std::string& d : done)
    out += (out.empty() ? "" : "/") + d;
  return out;
}

const RenderedHost* rendered_host(const std::string& spec) {
  HostCache& c = cache();
  if (auto it = c.rendered.find(spec); it != c.rendered.end()) return it->second.get();
  const auto start = std::chrono::steady_clock::now();
  auto profile = mock::load_profile(spec);
  if (!profile) {
    ADD_FAILURE() << "profile " << spec << ": " << profile.error().describe();
    return nullptr;
  }
  auto host = std::make_unique<RenderedHost>();
  auto image = mock::render_host(*profile, &host->summary);
  if (!image) {
    ADD_FAILURE() << "rendering " << spec << ": " << image.error().describe();
    return nullptr;
  }
  host->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  host->image = std::move(*image);
  host->manifest = nlohmann::json::parse(host->image.files.at("nodetopo-mock/manifest.json"));
  return c.rendered.emplace(spec, std::move(host)).first->second.get();
}

std::vector<std::string> shipped_profile_names() {
  std::vector<std::string> names;
  for (const auto& p : mock::shipped_profiles())
    names.emplace_back(p.name);
  return names;
}

std::vector<std::string> tree_entries(const fs::path& root) {
  std::vector<std::string> entries;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& p = it->path();
    const std::string rel = fs::relative(p, root).string();
    struct stat st {};
    ::lstat(p.c_str(), &st);
    std::ostringstream e;
    e << rel << " mode=" << std::oct << (st.st_mode & 07777) << std::dec << ' ';
    if (it->is_symlink()) {
      e << "-> " << fs::read_symlink(p).string();
    } else if (it->is_directory()) {
      e << "dir";
    } else {
      const std::string content = read_file(p);
      e << "file " << content.size() << ':' << content;
    }
    entries.push_back(e.str());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

std::string first_difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) {
      return "entry " + std::to_string(i) + " differs:\n  " + a[i].substr(0, 200) + "\n  " +
             b[i].substr(0, 200);
    }
  }
  if (a.size() != b.size()) {
    return std::to_string(a.size()) + " entries vs " + std::to_string(b.size());
  }
  return {};
}

std::unique_ptr<XmlObject> parse_hwloc_xml(const std::string& text) {
  std::unique_ptr<XmlObject> root;
  std::vector<XmlObject*> stack;
  std::size_t pos = 0;
  while ((pos = text.find('<', pos)) != std::string::npos) {
    const std::size_t end = text.find('>', pos);
    if (end == std::string::npos) return nullptr;
    const std::string tag = text.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag == "/object") {
      if (stack.empty()) return nullptr;
      stack.pop_back();
      continue;
    }
    if (!tag.starts_with("object ")) continue;  // info, page_type, distances...: not objects
    auto obj = std::make_unique<XmlObject>();
    static const std::regex kAttr(R"re(([A-Za-z_]+)="([^"]*)")re");
    for (auto it = std::sregex_iterator(tag.begin(), tag.end(), kAttr);
         it != std::sregex_iterator(); ++it) {
      obj->attrs[(*it)[1]] = (*it)[2];
    }
    obj->type = obj->attr("type");
    const bool self_closing = tag.ends_with("/");
    XmlObject* raw = obj.get();
    if (stack.empty()) {
      if (root) return nullptr;
      root = std::move(obj);
    } else {
      raw->parent = stack.back();
      stack.back()->children.push_back(std::move(obj));
    }
    if (!self_closing) stack.push_back(raw);
  }
  return root;
}

std::vector<const XmlObject*> all_objects(const XmlObject& root) {
  std::vector<const XmlObject*> out{&root};
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (const auto& child : out[i]->children)
      out.push_back(child.get());
  }
  return out;
}

std::string run_lstopo(const fs::path& root, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"lstopo-no-graphics"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CommandResult r =
      run_command(argv, {"HWLOC_FSROOT=" + root.string(), "HWLOC_COMPONENTS=linux,stop",
                         "HWLOC_XMLFILE=", "HWLOC_SYNTHETIC="});
  EXPECT_EQ(r.exit_code, 0) << "lstopo failed: " << r.err;
  return r.out;
}

std::string run_lspci(const fs::path& root, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"lspci", "-A", "linux-sysfs", "-O",
                                "sysfs.path=" + (root / "sys/bus/pci").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << "lspci failed: " << r.err;
  return r.out;
}

std::vector<LspciFunction> parse_lspci_verbose(const std::string& text) {
  std::vector<LspciFunction> out;
  static const std::regex kHead(R"(^([0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) (.*)$)");
  static const std::regex kExpress(R"(Express \(v2\) ([A-Za-z ]+?)(?: \(|,))");
  static const std::regex kLnkCap(R"(LnkCap:\s+Port #\d+, Speed ([0-9.]+)GT/s, Width x(\d+))");
  static const std::regex kLnkSta(R"(LnkSta:\s+Speed ([0-9.]+)GT/s[^,]*, Width x(\d+))");
  static const std::regex kTotal(R"(Initial VFs: \d+, Total VFs: (\d+), Number of VFs: (\d+))");
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, kHead)) {
      out.push_back({});
      out.back().address = m[1];
      out.back().description = m[2];
      continue;
    }
    if (out.empty()) continue;
    LspciFunction& f = out.back();
    if (std::regex_search(line, m, kExpress)) f.express = m[1];
    if (std::regex_search(line, m, kLnkCap)) {
      f.lnkcap_speed = m[1];
      f.lnkcap_width = m[2];
    }
    if (std::regex_search(line, m, kLnkSta)) {
      f.lnksta_speed = m[1];
      f.lnksta_width = m[2];
    }
    if (std::regex_search(line, m, kTotal)) {
      f.sriov_total_vfs = m[1];
      f.sriov_number_of_vfs = m[2];
    }
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const std::string trimmed = line.substr(first);
    if (trimmed.starts_with("NUMA node: ")) f.numa_node = trimmed.substr(11);
    if (trimmed.starts_with("Kernel driver in use: ")) f.driver = trimmed.substr(22);
    if (trimmed.starts_with("Physical Slot: ")) f.physical_slot = trimmed.substr(15);
    if (trimmed.find("Single Root I/O Virtualization (SR-IOV)") != std::string::npos) {
      f.sriov = true;
    }
  }
  return out;
}

std::map<std::string, std::string> parse_lspci_paths(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::string path = line.substr(0, line.find(' '));
    // The last component is the function; prefix it with the domain of the first one.
    const std::string domain = path.substr(0, path.find(':'));
    const std::string last =
        path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    const std::string address = last.size() == 7 ? domain + ":" + last : last;
    out[address] = path;
  }
  return out;
}

}  // namespace nodetopo::test
