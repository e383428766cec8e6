#include "oracle_tools.hpp"

#include <cctype>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "test_support.hpp"

namespace nodetopo::oracle {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

std::uint64_t to_u64(const std::string& text, int base, const std::string& what) {
  if (text.empty()) fail("empty number in " + what);
  std::size_t used = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(text, &used, base);
  } catch (const std::logic_error&) {  // invalid_argument, out_of_range
    used = 0;
  }
  if (used != text.size() || text[0] == '-' || text[0] == '+' || text[0] == ' ') {
    fail("bad number '" + text + "' in " + what);
  }
  return v;
}

std::string decode_entities(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const std::size_t semi = s.find(';', i);
    if (semi == std::string::npos) fail("bad XML entity in '" + s + "'");
    const std::string ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp") {
      out += '&';
    } else if (ent == "lt") {
      out += '<';
    } else if (ent == "gt") {
      out += '>';
    } else if (ent == "quot") {
      out += '"';
    } else if (ent == "apos") {
      out += '\'';
    } else if (!ent.empty() && ent[0] == '#') {
      const bool hex = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X');
      const auto code = to_u64(ent.substr(hex ? 2 : 1), hex ? 16 : 10, "XML character reference");
      if (code > 0x7f) fail("non-ASCII character reference in '" + s + "'");
      out += static_cast<char>(code);
    } else {
      fail("unknown XML entity &" + ent + ";");
    }
    i = semi;
  }
  return out;
}

// One XML start or end tag of lstopo's output, which is machine-written and regular: elements,
// attributes in double quotes, text only inside leaf elements (distance values).
struct Tag {
  std::string name;
  std::map<std::string, std::string> attrs;
  bool closing = false;       // </name>
  bool self_closing = false;  // <name .../>
};

Tag parse_tag(const std::string& body) {
  Tag tag;
  std::size_t i = 0;
  if (i < body.size() && body[i] == '/') {
    tag.closing = true;
    ++i;
  }
  std::size_t end = body.size();
  if (end > i && body[end - 1] == '/') {
    tag.self_closing = true;
    --end;
  }
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (i < end && !is_space(body[i]))
    tag.name += body[i++];
  while (i < end) {
    while (i < end && is_space(body[i]))
      ++i;
    if (i >= end) break;
    const std::size_t eq = body.find('=', i);
    if (eq == std::string::npos || eq + 1 >= end || body[eq + 1] != '"') {
      fail("cannot parse XML attributes in <" + body + ">");
    }
    const std::string key = body.substr(i, eq - i);
    const std::size_t close = body.find('"', eq + 2);
    if (close == std::string::npos || close > end) fail("unterminated attribute in <" + body + ">");
    tag.attrs[key] = decode_entities(body.substr(eq + 2, close - eq - 2));
    i = close + 1;
  }
  return tag;
}

struct XmlObject {
  std::map<std::string, std::string> attrs;
  int parent = -1;
};

std::string attr(const XmlObject& o, const std::string& key) {
  auto it = o.attrs.find(key);
  return it == o.attrs.end() ? std::string() : it->second;
}

std::vector<std::uint64_t> numbers(const std::string& text) {
  std::vector<std::uint64_t> out;
  std::istringstream in(text);
  std::string word;
  while (in >> word)
    out.push_back(to_u64(word, 10, "distances"));
  return out;
}

std::string hex2(unsigned v) {
  static constexpr char kHex[] = "0123456789abcdef";
  return {kHex[(v >> 4) & 0xf], kHex[v & 0xf]};
}

std::set<std::uint32_t> parse_cpulist_text(const std::string& text) {
  std::set<std::uint32_t> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const std::size_t dash = item.find('-');
    const auto first = static_cast<std::uint32_t>(to_u64(item.substr(0, dash), 10, "cpulist"));
    const auto last =
        dash == std::string::npos
            ? first
            : static_cast<std::uint32_t>(to_u64(item.substr(dash + 1), 10, "cpulist"));
    for (std::uint32_t c = first; c <= last; ++c)
      out.insert(c);
  }
  return out;
}

// "0604 [8086:2030] [8086:0000] 04" and "15.753846".
PciIdentity parse_pci_type(const std::string& type, const std::string& speed) {
  PciIdentity id;
  unsigned cls = 0;
  unsigned v = 0;
  unsigned d = 0;
  unsigned sv = 0;
  unsigned sd = 0;
  unsigned rev = 0;
  char tail = 0;
  if (std::sscanf(type.c_str(), "%4x [%4x:%4x] [%4x:%4x] %2x%c", &cls, &v, &d, &sv, &sd, &rev,
                  &tail) != 6) {
    fail("cannot parse pci_type '" + type + "'");
  }
  id.class_id = cls;
  id.vendor = v;
  id.device = d;
  id.subsystem_vendor = sv;
  id.subsystem_device = sd;
  id.revision = rev;
  if (!speed.empty()) id.link_gbps = std::stod(speed);
  return id;
}

}  // namespace

std::set<std::uint32_t> parse_hwloc_bitmap(const std::string& text) {
  if (text.find("0xf...f") != std::string::npos) fail("infinite hwloc bitmap '" + text + "'");
  std::vector<std::string> words;
  std::string cur;
  for (char c : text) {
    if (c == ',') {
      words.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  words.push_back(cur);
  std::set<std::uint32_t> out;
  std::uint32_t base = 0;
  for (auto it = words.rbegin(); it != words.rend(); ++it, base += 32) {
    std::string w = *it;
    if (w.starts_with("0x")) w = w.substr(2);
    if (w.empty()) continue;  // ",," is a zero word
    if (w.size() > 8) fail("hwloc bitmap word too long in '" + text + "'");
    const std::uint64_t bits = to_u64(w, 16, "hwloc bitmap '" + text + "'");
    for (std::uint32_t b = 0; b < 32; ++b) {
      if (((bits >> b) & 1U) != 0) out.insert(base + b);
    }
  }
  return out;
}

LstopoFacts parse_lstopo_xml(const std::string& xml) {
  std::vector<XmlObject> objects;
  std::vector<int> object_stack;           // indexes into objects of the open <object> elements
  std::vector<std::string> element_stack;  // every open element
  std::map<std::string, std::string> distances_attrs;
  std::string indexes_text;
  std::string values_text;
  LstopoFacts facts;

  auto finish_distances = [&] {
    if (distances_attrs["name"] != "NUMALatency" || distances_attrs["indexing"] != "os") return;
    const std::vector<std::uint64_t> idx = numbers(indexes_text);
    const std::vector<std::uint64_t> val = numbers(values_text);
    if (val.size() != idx.size() * idx.size()) fail("NUMALatency matrix has the wrong size");
    for (std::size_t a = 0; a < idx.size(); ++a) {
      for (std::size_t b = 0; b < idx.size(); ++b) {
        facts.distances[{static_cast<std::uint32_t>(idx[a]), static_cast<std::uint32_t>(idx[b])}] =
            static_cast<std::int64_t>(val[a * idx.size() + b]);
      }
    }
  };

  std::size_t pos = 0;
  while (true) {
    const std::size_t lt = xml.find('<', pos);
    if (lt == std::string::npos) break;
    if (!element_stack.empty()) {
      const std::string text = xml.substr(pos, lt - pos);
      if (element_stack.back() == "indexes") indexes_text += text;
      if (element_stack.back() == "u64values") values_text += text;
    }
    const std::size_t gt = xml.find('>', lt);
    if (gt == std::string::npos) fail("unterminated XML tag");
    pos = gt + 1;
    const std::string body = xml.substr(lt + 1, gt - lt - 1);
    if (body.starts_with("?") || body.starts_with("!")) continue;  // declaration, DOCTYPE
    Tag tag = parse_tag(body);
    if (tag.closing) {
      if (element_stack.empty() || element_stack.back() != tag.name) {
        fail("unbalanced XML: </" + tag.name + ">");
      }
      element_stack.pop_back();
      if (tag.name == "object") object_stack.pop_back();
      if (tag.name == "distances2") finish_distances();
      continue;
    }
    if (tag.name == "object") {
      XmlObject obj;
      obj.attrs = std::move(tag.attrs);
      obj.parent = object_stack.empty() ? -1 : object_stack.back();
      objects.push_back(std::move(obj));
      if (!tag.self_closing) object_stack.push_back(static_cast<int>(objects.size()) - 1);
    } else if (tag.name == "distances2") {
      distances_attrs = tag.attrs;
      indexes_text.clear();
      values_text.clear();
    }
    if (!tag.self_closing) element_stack.push_back(tag.name);
  }
  if (!element_stack.empty()) fail("unterminated XML element <" + element_stack.back() + ">");

  for (const XmlObject& o : objects) {
    const std::string type = attr(o, "type");
    if (type == "NUMANode") {
      NumaFacts n;
      n.cpus = parse_hwloc_bitmap(attr(o, "cpuset"));
      n.subtype = attr(o, "subtype");
      n.memory_bytes = to_u64(attr(o, "local_memory"), 10, "local_memory");
      const auto os = static_cast<std::uint32_t>(to_u64(attr(o, "os_index"), 10, "os_index"));
      if (!facts.numa.emplace(os, std::move(n)).second) fail("duplicate NUMA node in lstopo XML");
      continue;
    }
    const std::string busid = attr(o, "pci_busid");
    if (busid.empty()) continue;  // host bridges and non-PCI objects
    std::string parent = kHostBridge;
    for (int p = o.parent; p >= 0; p = objects[static_cast<std::size_t>(p)].parent) {
      const XmlObject& up = objects[static_cast<std::size_t>(p)];
      if (!attr(up, "pci_busid").empty()) {
        parent = attr(up, "pci_busid");
        break;
      }
      if (attr(up, "type") == "Bridge") break;  // a host bridge
    }
    if (!facts.pci.emplace(busid, parent).second) fail("duplicate PCI object " + busid);
    facts.pci_identity[busid] = parse_pci_type(attr(o, "pci_type"), attr(o, "pci_link_speed"));
    facts.pci_identity[busid].is_bridge = type == "Bridge";
  }
  return facts;
}

LstopoFacts run_lstopo(const std::string& root) {
  const test::CommandResult r = test::run_command(
      {"lstopo-no-graphics", "--whole-io", "--disallowed", "--of", "xml"},
      {"HWLOC_FSROOT=" + root, "HWLOC_COMPONENTS=linux,stop", "HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES=1",
       "HWLOC_XMLFILE=", "HWLOC_SYNTHETIC="});
  if (r.exit_code != 0) fail("lstopo-no-graphics failed on " + root + ": " + r.err);
  LstopoFacts facts = parse_lstopo_xml(r.out);
  facts.stderr_text = r.err;
  return facts;
}

// ---------------------------------------------------------------------------------------------
// lspci -t

PciParents parse_lspci_tree(const std::string& text) {
  // One entry per printed bus or function, with the column where its name starts.
  struct Frame {
    std::size_t col = 0;
    bool is_bus = false;
    std::string domain;               // hex, as printed
    std::optional<unsigned> bus;      // bus entry: its number; function: its secondary bus
    std::string bdf;                  // function entries
    std::string owner = kHostBridge;  // bus entries: the bridge they hang from
  };
  PciParents out;
  std::vector<Frame> stack;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  const auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = "lspci -t line " + std::to_string(line_no) + ": '" + line + "'";
    bool after_function = false;  // the previous token on this line was a function
    std::size_t i = 0;
    while (i < line.size()) {
      const char c = line[i];
      if (c == ' ' || c == '|' || c == '+' || c == '-' || c == '\\') {
        ++i;
        continue;
      }
      if (c == '[') {
        const std::size_t close = line.find(']', i);
        if (close == std::string::npos) fail("unterminated '[' in " + where);
        const std::string inner = line.substr(i + 1, close - i - 1);
        const std::size_t colon = inner.find(':');
        if (colon == std::string::npos) {
          // "-[ss]" or "-[ss-ee]": the bus range of the function just printed.
          if (!after_function) fail("bus range without a bridge in " + where);
          const std::string secondary = inner.substr(0, inner.find('-'));
          stack.back().bus = static_cast<unsigned>(to_u64(secondary, 16, where));
        } else {
          while (!stack.empty() && stack.back().col >= i)
            stack.pop_back();
          Frame bus;
          bus.col = i;
          bus.is_bus = true;
          bus.domain = inner.substr(0, colon);
          bus.bus = static_cast<unsigned>(to_u64(inner.substr(colon + 1), 16, where));
          if (!stack.empty()) {
            if (stack.back().is_bus) fail("bus nested directly in a bus in " + where);
            bus.owner = stack.back().bdf;
          }
          stack.push_back(bus);
        }
        after_function = false;
        i = close + 1;
        continue;
      }
      if (i + 4 <= line.size() && is_hex(line[i]) && is_hex(line[i + 1]) && line[i + 2] == '.' &&
          is_hex(line[i + 3])) {
        while (!stack.empty() && stack.back().col >= i)
          stack.pop_back();
        if (stack.empty()) fail("function outside any bus in " + where);
        const Frame& up = stack.back();
        if (!up.bus) fail("function below a bridge without a secondary bus in " + where);
        std::string bdf(up.domain.size() < 4 ? 4 - up.domain.size() : 0, '0');
        bdf += up.domain + ":" + hex2(*up.bus) + ":" + line.substr(i, 4);
        const std::string parent = up.is_bus ? up.owner : up.bdf;
        if (!out.emplace(bdf, parent).second) fail("function " + bdf + " printed twice");
        Frame fn;
        fn.col = i;
        fn.domain = up.domain;
        fn.bdf = bdf;
        stack.push_back(fn);
        i += 4;
        after_function = true;
        if (line.compare(i, 2, "  ") == 0) break;  // -v: the name follows
        continue;
      }
      fail("unexpected character '" + std::string(1, c) + "' in " + where);
    }
  }
  return out;
}

LspciResult run_lspci_tree(const std::string& root) {
  const test::CommandResult r = test::run_command(
      {"lspci", "-A", "linux-sysfs", "-O", "sysfs.path=" + root + "/sys/bus/pci", "-tv"});
  LspciResult result;
  result.exit_code = r.exit_code;
  result.stderr_text = r.err;
  if (r.exit_code == 0) result.pci = parse_lspci_tree(r.out);
  return result;
}

// ---------------------------------------------------------------------------------------------
// nodetopo's side

PciParents model_pci_parents(const Topology& topology) {
  PciParents out;
  for (NodeIndex i = 0; i < topology.size(); ++i) {
    const Node& n = topology.node(i);
    if (!n.is_pci()) continue;
    std::string parent = kHostBridge;
    for (NodeIndex p = n.parent; p != kNoNode; p = topology.node(p).parent) {
      const Node& up = topology.node(p);
      if (up.is_pci()) {
        parent = up.as<PciFunctionInfo>().address.to_string();
        break;
      }
      if (up.kind == NodeKind::kHostBridge) break;
      fail(n.id + " is not below a host bridge");
    }
    out.emplace(n.as<PciFunctionInfo>().address.to_string(), parent);
  }
  return out;
}

std::map<std::uint32_t, NumaFacts> model_numa(const Topology& topology) {
  std::map<std::uint32_t, NumaFacts> out;
  for (NodeIndex i : topology.nodes_of_kind(NodeKind::kNumaNode)) {
    const auto& info = topology.node(i).as<NumaInfo>();
    NumaFacts f;
    for (std::uint32_t c : info.cpus.members())
      f.cpus.insert(c);
    f.subtype = info.subtype;
    f.memory_bytes = info.memory_bytes;
    out.emplace(info.os_index, std::move(f));
  }
  return out;
}

namespace {

void walk_json(const nlohmann::json& node, const std::string& parent, PciParents& pci,
               std::map<std::uint32_t, NumaFacts>& numa) {
  const std::string kind = node.at("kind").get<std::string>();
  std::string below = parent;
  if (kind == "pci_bridge" || kind == "pci_device") {
    const std::string address = node.at("address").get<std::string>();
    if (parent.empty()) fail(address + " is not below a host bridge in the JSON");
    pci.emplace(address, parent);
    below = address;
  } else if (kind == "host_bridge") {
    below = kHostBridge;
  } else if (kind == "numa_node") {
    NumaFacts f;
    f.cpus = parse_cpulist_text(node.at("cpus").get<std::string>());
    if (node.contains("subtype")) f.subtype = node.at("subtype").get<std::string>();
    f.memory_bytes = node.at("memory_bytes").get<std::uint64_t>();
    numa.emplace(node.at("os_index").get<std::uint32_t>(), std::move(f));
  }
  if (node.contains("children")) {
    for (const auto& child : node.at("children"))
      walk_json(child, below, pci, numa);
  }
}

}  // namespace

PciParents json_pci_parents(const nlohmann::json& doc) {
  PciParents pci;
  std::map<std::uint32_t, NumaFacts> numa;
  walk_json(doc.at("machine"), "", pci, numa);
  return pci;
}

std::map<std::uint32_t, NumaFacts> json_numa(const nlohmann::json& doc) {
  PciParents pci;
  std::map<std::uint32_t, NumaFacts> numa;
  walk_json(doc.at("machine"), "", pci, numa);
  return numa;
}

std::string diff_parents(const PciParents& left, const std::string& left_name,
                         const PciParents& right, const std::string& right_name) {
  std::string out;
  for (const auto& [bdf, parent] : left) {
    auto it = right.find(bdf);
    if (it == right.end()) {
      out += "  " + bdf + ": only in " + left_name + " (parent " + parent + ")\n";
    } else if (it->second != parent) {
      out += "  " + bdf + ": parent " + parent + " in " + left_name + ", " + it->second + " in " +
             right_name + "\n";
    }
  }
  for (const auto& [bdf, parent] : right) {
    if (!left.contains(bdf)) {
      out += "  " + bdf + ": only in " + right_name + " (parent " + parent + ")\n";
    }
  }
  return out;
}

}  // namespace nodetopo::oracle
