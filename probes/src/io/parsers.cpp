#include <algorithm>
#include <charconv>
#include <limits>

#include <nodetopo/probes/parsers.hpp>

namespace nodetopo::probes {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\0';
}

std::string quote(std::string_view text) {
  constexpr std::size_t kMax = 64;
  std::string shown(text.substr(0, kMax));
  if (text.size() > kMax) shown += "...";
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return "'" + shown + "'";
}

Error malformed(std::string_view what, std::string_view text) {
  return make_error(ErrorCode::kMalformed,
                    "expected " + std::string(what) + ", got " + quote(text));
}

template <class T>
bool parse_number(std::string_view text, T& out, int base = 10) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out, base);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && is_space(text.back()))
    text.remove_suffix(1);
  return text;
}

Result<CpuSet> parse_cpulist(std::string_view text) {
  const std::string_view body = trim(text);
  CpuSet set;
  if (body.empty()) return set;
  // Bound ranges so that a corrupt "0-4294967295" cannot allocate gigabytes.
  constexpr std::uint32_t kMaxCpu = 1U << 20;
  std::size_t start = 0;
  while (start <= body.size()) {
    const std::size_t comma = std::min(body.find(',', start), body.size());
    const std::string_view item = body.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    std::uint32_t first = 0;
    std::uint32_t last = 0;
    if (dash == std::string_view::npos) {
      if (!parse_number(item, first)) return malformed("a cpulist like 0-3,8", text);
      last = first;
    } else if (!parse_number(item.substr(0, dash), first) ||
               !parse_number(item.substr(dash + 1), last) || last < first) {
      return malformed("a cpulist like 0-3,8", text);
    }
    if (last >= kMaxCpu) return malformed("CPU numbers below 1048576", text);
    set.insert_range(first, last);
    start = comma + 1;
  }
  return set;
}

Result<CpuSet> parse_cpumask(std::string_view text) {
  const std::string_view body = trim(text);
  if (body.empty()) return malformed("a hex cpumask", text);
  std::vector<std::uint32_t> words;
  std::size_t start = 0;
  while (start <= body.size()) {
    const std::size_t comma = std::min(body.find(',', start), body.size());
    std::uint32_t word = 0;
    const std::string_view item = body.substr(start, comma - start);
    if (item.size() > 8 || !parse_number(item, word, 16)) return malformed("a hex cpumask", text);
    words.push_back(word);
    start = comma + 1;
  }
  CpuSet set;
  std::uint32_t base = 0;
  for (auto it = words.rbegin(); it != words.rend(); ++it, base += 32) {
    for (std::uint32_t bit = 0; bit < 32; ++bit) {
      if (((*it >> bit) & 1U) != 0) set.insert(base + bit);
    }
  }
  return set;
}

Result<PciAddress> parse_pci_address(std::string_view text) {
  const std::string_view body = trim(text);
  // dddd[dddd]:bb:dd.f
  const std::size_t c1 = body.find(':');
  const std::size_t c2 = body.find(':', c1 == std::string_view::npos ? 0 : c1 + 1);
  const std::size_t dot = body.find('.', c2 == std::string_view::npos ? 0 : c2 + 1);
  if (c1 == std::string_view::npos || c2 == std::string_view::npos ||
      dot == std::string_view::npos) {
    return malformed("a PCI address like 0000:65:00.0", text);
  }
  const std::string_view dom = body.substr(0, c1);
  const std::string_view bus = body.substr(c1 + 1, c2 - c1 - 1);
  const std::string_view dev = body.substr(c2 + 1, dot - c2 - 1);
  const std::string_view fn = body.substr(dot + 1);
  PciAddress addr;
  std::uint32_t b = 0;
  std::uint32_t d = 0;
  std::uint32_t f = 0;
  if (dom.size() < 4 || dom.size() > 8 || !parse_number(dom, addr.domain, 16) || bus.size() != 2 ||
      !parse_number(bus, b, 16) || dev.size() != 2 || !parse_number(dev, d, 16) || d > 31 ||
      fn.size() != 1 || !parse_number(fn, f, 16) || f > 7) {
    return malformed("a PCI address like 0000:65:00.0", text);
  }
  addr.bus = static_cast<std::uint8_t>(b);
  addr.device = static_cast<std::uint8_t>(d);
  addr.function = static_cast<std::uint8_t>(f);
  return addr;
}

Result<std::uint32_t> parse_link_speed(std::string_view text) {
  const std::string_view body = trim(text);
  // The kernel writes "Unknown" (older kernels "Unknown speed") for a reserved or absent speed.
  if (body == "Unknown" || body == "Unknown speed") return 0U;
  // "<rate> GT/s", optionally followed by " PCIe" (kernels since 4.17); nothing else.
  std::string_view number = body;
  if (number.ends_with(" PCIe")) number.remove_suffix(5);
  if (!number.ends_with(" GT/s")) return malformed("a link speed like '8.0 GT/s PCIe'", text);
  number.remove_suffix(5);
  // Fixed-point parse in MT/s: "2.5" -> 2500, "16.0" -> 16000. No floating point, exact.
  const std::size_t dot = number.find('.');
  std::uint32_t whole = 0;
  std::uint32_t frac = 0;
  std::size_t frac_digits = 0;
  if (!parse_number(number.substr(0, dot), whole)) {
    return malformed("a link speed like '8.0 GT/s PCIe'", text);
  }
  if (dot != std::string_view::npos) {
    const std::string_view f = number.substr(dot + 1);
    if (f.empty() || f.size() > 3 || !parse_number(f, frac)) {
      return malformed("a link speed like '8.0 GT/s PCIe'", text);
    }
    frac_digits = f.size();
  }
  if (whole > 1000) return malformed("a link speed below 1000 GT/s", text);
  for (std::size_t i = frac_digits; i < 3; ++i)
    frac *= 10;
  return whole * 1000 + frac;
}

Result<std::uint32_t> parse_link_width(std::string_view text) {
  std::string_view body = trim(text);
  if (body.starts_with('x') || body.starts_with('X')) body.remove_prefix(1);
  std::uint32_t width = 0;
  if (!parse_number(body, width)) return malformed("a link width like 16", text);
  if (width == 255) return 0U;  // what the kernel shows for a link that never trained
  if (width > 32) return malformed("a link width of at most 32 lanes", text);
  return width;
}

Result<std::uint64_t> parse_hex(std::string_view text, std::uint64_t max) {
  std::string_view body = trim(text);
  if (body.starts_with("0x") || body.starts_with("0X")) body.remove_prefix(2);
  std::uint64_t value = 0;
  if (body.size() > 16 || !parse_number(body, value, 16)) {
    return malformed("a hexadecimal number like 0x10de", text);
  }
  if (value > max) return malformed("a hexadecimal number at most " + std::to_string(max), text);
  return value;
}

Result<std::int64_t> parse_int(std::string_view text) {
  std::int64_t value = 0;
  if (!parse_number(trim(text), value)) return malformed("an integer", text);
  return value;
}

Result<std::uint64_t> parse_uint(std::string_view text) {
  std::uint64_t value = 0;
  if (!parse_number(trim(text), value)) return malformed("a non-negative integer", text);
  return value;
}

Result<std::optional<std::uint32_t>> parse_numa_node(std::string_view text) {
  auto value = parse_int(text);
  if (!value) return malformed("a NUMA node number or -1", text);
  if (*value == -1) return std::optional<std::uint32_t>{};
  if (*value < 0 || *value > 65535) return malformed("a NUMA node number or -1", text);
  return std::optional<std::uint32_t>{static_cast<std::uint32_t>(*value)};
}

Result<std::vector<std::int64_t>> parse_distance_row(std::string_view text) {
  std::vector<std::int64_t> row;
  std::string_view body = trim(text);
  while (!body.empty()) {
    std::size_t end = 0;
    while (end < body.size() && !is_space(body[end]))
      ++end;
    std::int64_t v = 0;
    if (!parse_number(body.substr(0, end), v) || v <= 0 || v > 255) {
      return malformed("NUMA distances between 1 and 255", text);
    }
    row.push_back(v);
    body = trim(body.substr(end));
  }
  if (row.empty()) return malformed("a NUMA distance row", text);
  return row;
}

namespace {

// The lines of `text`, trimmed, blank ones left out: how KFD properties and uevent files are read.
// A range walked in place, not a vector: a PCI uevent file is parsed per function, and growing a
// vector of its seven lines took four allocations each time.
class NonblankLines {
 public:
  explicit NonblankLines(std::string_view text) : text_(text) {}

  class iterator {
   public:
    iterator(std::string_view text, std::size_t start) : text_(text), next_(start) { advance(); }
    std::string_view operator*() const { return line_; }
    iterator& operator++() {
      advance();
      return *this;
    }
    bool operator!=(const iterator& other) const { return at_end_ != other.at_end_; }

   private:
    // The next nonblank line from next_ on, or the end.
    void advance() {
      while (next_ < text_.size()) {
        const std::size_t nl = std::min(text_.find('\n', next_), text_.size());
        line_ = trim(text_.substr(next_, nl - next_));
        next_ = nl + 1;
        if (!line_.empty()) return;
      }
      at_end_ = true;
    }
    std::string_view text_;
    std::size_t next_;
    std::string_view line_;
    bool at_end_ = false;
  };

  [[nodiscard]] iterator begin() const { return {text_, 0}; }
  [[nodiscard]] iterator end() const { return {text_, text_.size()}; }

 private:
  std::string_view text_;
};

NonblankLines nonblank_lines(std::string_view text) {
  return NonblankLines(text);
}

}  // namespace

Result<std::vector<std::pair<std::string_view, std::string_view>>> parse_key_value_lines(
    std::string_view text) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  // One allocation for the lines, not one per doubling: a KFD tree holds thousands of these files
  // (12 to some 40 lines each). Capped, so that a file of blank lines reserves nothing absurd.
  constexpr std::size_t kReservedLines = 64;
  out.reserve(std::min<std::size_t>(
      static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1, kReservedLines));
  for (const std::string_view line : nonblank_lines(text)) {
    std::size_t sp = 0;
    while (sp < line.size() && !is_space(line[sp]))
      ++sp;
    if (sp == line.size()) return malformed("'key value' lines", line);
    out.emplace_back(line.substr(0, sp), trim(line.substr(sp)));
  }
  return out;
}

namespace {

// "10DE:2330": two 16-bit hex ids joined by a colon, as uevent writes PCI_ID and PCI_SUBSYS_ID.
bool parse_id_pair(std::string_view text, std::uint16_t& first, std::uint16_t& second) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  const std::string_view left = text.substr(0, colon);
  const std::string_view right = text.substr(colon + 1);
  if (left.empty() || left.size() > 4 || right.empty() || right.size() > 4) return false;
  if (!parse_number(left, a, 16) || !parse_number(right, b, 16)) return false;
  first = static_cast<std::uint16_t>(a);
  second = static_cast<std::uint16_t>(b);
  return true;
}

}  // namespace

Result<PciUevent> parse_pci_uevent(std::string_view text) {
  PciUevent out;
  bool have_class = false;
  bool have_id = false;
  for (const std::string_view line : nonblank_lines(text)) {
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) return malformed("KEY=value lines", line);
    const std::string_view key = line.substr(0, eq);
    const std::string_view value = line.substr(eq + 1);
    if (key == "PCI_CLASS") {
      std::uint64_t cls = 0;
      if (value.empty() || value.size() > 6 || !parse_number(value, cls, 16)) {
        return malformed("PCI_CLASS=<hex class code>", line);
      }
      out.class_code = static_cast<std::uint32_t>(cls);
      have_class = true;
    } else if (key == "PCI_ID") {
      if (!parse_id_pair(value, out.vendor_id, out.device_id)) {
        return malformed("PCI_ID=<vendor>:<device>", line);
      }
      have_id = true;
    } else if (key == "PCI_SUBSYS_ID") {
      std::uint16_t v = 0;
      std::uint16_t d = 0;
      if (!parse_id_pair(value, v, d)) return malformed("PCI_SUBSYS_ID=<vendor>:<device>", line);
      out.subsystem_vendor_id = v;
      out.subsystem_device_id = d;
    } else if (key == "DRIVER") {
      out.driver = std::string(value);
    } else if (key == "PCI_SLOT_NAME") {
      out.slot_name = std::string(value);
    }
  }
  if (!have_class) return malformed("a PCI_CLASS line", text);
  if (!have_id) return malformed("a PCI_ID line", text);
  return out;
}

}  // namespace nodetopo::probes
