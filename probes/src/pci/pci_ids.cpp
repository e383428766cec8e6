#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/probes/pci_ids.hpp>

namespace nodetopo::probes {

namespace {

// Parses exactly `n` lowercase or uppercase hex digits at the start of `text`.
std::optional<std::uint16_t> hex_prefix(std::string_view text, std::size_t n) {
  if (text.size() < n) return std::nullopt;
  std::uint16_t value = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = text[i];
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    value = static_cast<std::uint16_t>((value << 4) | digit);
  }
  return value;
}

// The name after an ID: pci.ids separates them with two spaces.
std::string name_after(std::string_view line, std::size_t id_end) {
  std::string_view rest = line.substr(id_end);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
    rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' '))
    rest.remove_suffix(1);
  return std::string(rest);
}

// libpci's name for an unlisted subclass: the base class name and the number.
std::string base_class_fallback(const std::string& base_name, std::uint16_t class_id) {
  std::array<char, 8> num{};
  std::snprintf(num.data(), num.size(), "%04x", class_id);
  return base_name + " [" + num.data() + "]";
}

}  // namespace

std::string PciNames::vendor(std::uint16_t vendor_id) const {
  auto it = vendors.find(vendor_id);
  return it != vendors.end() ? it->second : std::string();
}

std::string PciNames::device(std::uint16_t vendor_id, std::uint16_t device_id) const {
  auto it = devices.find({vendor_id, device_id});
  return it != devices.end() ? it->second : std::string();
}

std::string PciNames::class_name(std::uint16_t class_id) const {
  auto it = classes.find(class_id);
  return it != classes.end() ? it->second : std::string();
}

namespace {

// The full scan, for a file the sorted lookup cannot serve: `consumed(pos)` is told, every
// kReleaseEvery bytes, that the text before `pos` will not be read again.
constexpr std::size_t kReleaseEvery = std::size_t{256} << 10;

template <class Consumed>
PciNames scan_names(std::string_view text, std::span<const PciNameQuery> queries,
                    Consumed&& consumed) {
  std::set<std::uint16_t> want_vendor;
  std::set<std::pair<std::uint16_t, std::uint16_t>> want_device;
  std::set<std::uint16_t> want_class;
  for (const PciNameQuery& q : queries) {
    want_vendor.insert(q.vendor_id);
    want_device.insert({q.vendor_id, q.device_id});
    want_class.insert(q.class_id);
  }
  std::set<std::uint8_t> want_base;
  for (std::uint16_t c : want_class)
    want_base.insert(static_cast<std::uint8_t>(c >> 8));

  PciNames names;
  std::map<std::uint8_t, std::string> base_names;
  enum class Section { kNone, kVendor, kClass };
  Section section = Section::kNone;
  std::uint16_t current = 0;  // vendor id, or base class
  bool current_wanted = false;

  std::size_t pos = 0;
  std::size_t next_release = kReleaseEvery;
  while (pos < text.size()) {
    if (pos >= next_release) {
      consumed(pos);
      next_release = pos + kReleaseEvery;
    }
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line.front() == '#') continue;

    if (line.front() != '\t') {
      if (line.starts_with("C ")) {
        auto base = hex_prefix(line.substr(2), 2);
        section = base ? Section::kClass : Section::kNone;
        current = base.value_or(0);
        current_wanted = base && want_base.contains(static_cast<std::uint8_t>(*base));
        if (current_wanted) base_names[static_cast<std::uint8_t>(current)] = name_after(line, 4);
        continue;
      }
      auto vendor = hex_prefix(line, 4);
      // Other top-level sections (device classes done, "X" ...) end the vendor list.
      section = vendor && line.size() > 4 && line[4] == ' ' ? Section::kVendor : Section::kNone;
      current = vendor.value_or(0);
      current_wanted = section == Section::kVendor && want_vendor.contains(current);
      if (current_wanted) names.vendors[current] = name_after(line, 4);
      continue;
    }
    if (!current_wanted || line.size() < 2 || line[1] == '\t') continue;  // subsystems, prog-ifs
    const std::string_view body = line.substr(1);
    if (section == Section::kVendor) {
      auto device = hex_prefix(body, 4);
      if (device && want_device.contains({current, *device})) {
        names.devices[{current, *device}] = name_after(body, 4);
      }
    } else if (section == Section::kClass) {
      auto sub = hex_prefix(body, 2);
      if (!sub) continue;
      const auto id = static_cast<std::uint16_t>((current << 8) | *sub);
      if (want_class.contains(id)) names.classes[id] = name_after(body, 2);
    }
  }
  for (std::uint16_t id : want_class) {
    if (names.classes.contains(id)) continue;
    auto base = base_names.find(static_cast<std::uint8_t>(id >> 8));
    if (base == base_names.end()) continue;
    names.classes[id] = base_class_fallback(base->second, id);
  }
  return names;
}

}  // namespace

namespace {

// ---- The sorted lookup ------------------------------------------------------------------------
// pci.ids is generated from the PCI ID database sorted: vendors by ID, then the device classes
// by number; each vendor's devices, and each class's subclasses, by ID. A binary search over
// byte offsets finds an entry by reading a few lines near each probe point — about 20 pages of
// the 1.3 MB file instead of all of it.

constexpr std::size_t kMostSortedLookups = 512;

// Line keys: vendors 0x0000-0xffff, classes 0x10000 + base class, in file order.
constexpr std::uint32_t kClassKey = 0x10000;

struct KeyLine {
  std::size_t start = 0;  ///< offset of the line
  std::size_t end = 0;    ///< offset of its '\n' (or the text's end)
  std::uint32_t key = 0;
};

// A top-level entry line: "hhhh  Vendor" or "C bb  Class"; comments and others are not.
std::optional<std::uint32_t> top_level_key(std::string_view line) {
  if (line.empty() || line.front() == '#' || line.front() == '\t') return std::nullopt;
  if (line.starts_with("C ")) {
    auto base = hex_prefix(line.substr(2), 2);
    if (!base) return std::nullopt;
    return kClassKey + *base;
  }
  auto vendor = hex_prefix(line, 4);
  if (!vendor || line.size() <= 4 || line[4] != ' ') return std::nullopt;
  return *vendor;
}

// A device line below a vendor ("\thhhh  Device"), or, with `digits` 2, a subclass line below a
// class; subsystem and prog-if lines (two tabs) are not.
std::optional<std::uint32_t> entry_key(std::string_view line, std::size_t digits) {
  if (line.size() < 2 || line[0] != '\t' || line[1] == '\t') return std::nullopt;
  auto id = hex_prefix(line.substr(1), digits);
  if (!id) return std::nullopt;
  return *id;
}

class SortedIds {
 public:
  explicit SortedIds(std::string_view text) : text_(text) {}

  // The first key line in [begin, end) whose key is at least `target` (nullopt: none), given
  // that the keys of those lines increase; `at_end` is what is known of the first key line from
  // `end` on, and `above` collects the first line seen whose key is above `target`.
  //
  // Each probe reads lines outward from its offset, one forward and one back in turn, until one
  // has a key: landing inside Intel's 8,500-line list of devices and subsystems costs the
  // distance to its nearer end, not to its far end.
  template <class KeyOf>
  std::optional<KeyLine> lower_bound(std::size_t begin, std::size_t end, std::uint32_t target,
                                     KeyOf&& key_of, std::optional<KeyLine> at_end = std::nullopt,
                                     std::optional<KeyLine>* above = nullptr, bool top = false) {
    std::size_t lo = line_start_from(begin);  // key lines before lo: keys below target
    std::size_t hi = end;                     // the first key line from hi on is at_hi
    std::optional<KeyLine> at_hi = at_end;
    auto note_above = [&](const KeyLine& line) {
      if (above != nullptr && line.key > target && (!*above || line.start < (*above)->start)) {
        *above = line;
      }
    };
    if (top) {
      // What earlier searches found narrows this one.
      for (const auto& [start, line] : known_) {
        if (line.key < target) {
          if (line.start >= lo) lo = line.end + 1;
        } else {
          note_above(line);
          if (line.start < hi) {
            hi = line.start;
            at_hi = line;
          }
          break;
        }
      }
    }
    while (lo < hi) {
      std::size_t fwd = line_start_from(lo + (hi - lo) / 2);  // next line to read forward
      std::size_t back = fwd;                                 // start of the last line read back
      // Where the next known span starts forward, and the last known span ends back: only there
      // is skip_known() worth its map lookups.
      std::size_t span_ahead = hi;
      std::size_t span_behind = lo;
      if (top) {
        skip_known(fwd, back, lo, hi);
        spans_near(fwd, back, span_ahead, span_behind);
      }
      std::optional<KeyLine> found;
      bool forward = false;
      while (!found) {
        const bool can_fwd = fwd < hi;
        const bool can_back = back > lo;
        if (!can_fwd && !can_back) break;
        if (can_fwd) {
          const std::size_t e = line_end(fwd);
          found = key_line(fwd, e, key_of);
          forward = true;
          fwd = e + 1;
        }
        if (!found && can_back) {
          const std::size_t start = line_start_before(back);
          found = key_line(start, back - 1, key_of);
          forward = false;
          back = start;
        }
        if (top && !found && (fwd >= span_ahead || back <= span_behind)) {
          skip_known(fwd, back, lo, hi);
          span_ahead = hi;
          span_behind = lo;
          spans_near(fwd, back, span_ahead, span_behind);
        }
      }
      if (top) {
        // Remember the lines without a key and the key line, for the searches that follow.
        const std::size_t span_begin = found && !forward ? found->end + 1 : back;
        const std::size_t span_end = found && forward ? found->start : fwd;
        if (span_begin < span_end) spans_[span_begin] = span_end;
        if (found) known_.emplace(found->start, *found);
      }
      if (!found) {
        hi = lo;  // no key line in [lo, hi): the answer is at_hi
        break;
      }
      note_above(*found);
      if (found->key >= target) {
        // Lines between the last read back and this one have no key.
        hi = forward ? back : found->start;
        at_hi = found;
      } else {
        // Lines between this one and the next to read forward have no key.
        lo = forward ? found->end + 1 : fwd;
      }
    }
    return at_hi;
  }

  // The entry `key` of the top level and where its block of entry lines ends (the next entry of
  // the top level).
  struct Block {
    KeyLine head;
    std::size_t end = 0;
  };
  std::optional<Block> block(std::uint32_t key) {
    // Vendors are searched before the classes, classes after the last vendor: a search never
    // lands in the other part (Intel's block, a quarter of the file, lies just before the
    // classes).
    const std::size_t classes = class_section();
    const std::size_t begin = key >= kClassKey ? classes : 0;
    const std::size_t end = key >= kClassKey ? text_.size() : classes;
    std::optional<KeyLine> above;
    auto head = lower_bound(begin, end, key, top_level_key, std::nullopt, &above, true);
    if (!head || head->key != key) return std::nullopt;
    const std::size_t limit = above && above->start < end ? above->start : end;
    auto next = lower_bound(head->end, limit, key + 1, top_level_key,
                            above && above->start < end ? above : std::nullopt, nullptr, true);
    return Block{*head, next ? next->start : end};
  }

  // The entry line `id` of block `b`; nullopt when the block does not list it. A top-level entry
  // met inside the block means the file is not in the order the block was found by: then
  // out_of_order() is set and the caller reads the whole file instead.
  std::optional<KeyLine> entry(const Block& b, std::uint32_t id, std::size_t digits) {
    auto key_of = [this, digits](std::string_view line) {
      if (top_level_key(line)) out_of_order_ = true;
      return entry_key(line, digits);
    };
    auto line = lower_bound(b.head.end, b.end, id, key_of);
    if (!line || line->key != id) return std::nullopt;
    return line;
  }

  [[nodiscard]] std::string_view line(const KeyLine& l) const {
    return text_.substr(l.start, l.end - l.start);
  }
  [[nodiscard]] std::size_t lines_read() const { return lines_read_; }
  [[nodiscard]] bool out_of_order() const { return out_of_order_; }

 private:
  // The start of the line `pos` is in if it starts there, else of the next line.
  [[nodiscard]] std::size_t line_start_from(std::size_t pos) const {
    if (pos == 0 || pos >= text_.size() || text_[pos - 1] == '\n') return pos;
    const std::size_t nl = text_.find('\n', pos);
    return nl == std::string_view::npos ? text_.size() : nl + 1;
  }
  // The end ('\n' or the text's end) of the line starting at `start`.
  [[nodiscard]] std::size_t line_end(std::size_t start) const {
    const std::size_t nl = text_.find('\n', start);
    return nl == std::string_view::npos ? text_.size() : nl;
  }
  // The start of the line before the one starting at `start` (> 0).
  [[nodiscard]] std::size_t line_start_before(std::size_t start) const {
    if (start < 2) return 0;
    // memrchr: string_view::rfind goes a byte at a time.
    const void* nl = ::memrchr(text_.data(), '\n', start - 1);
    return nl == nullptr
               ? 0
               : static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) + 1;
  }
  // Where the device classes begin: read back from the end of the text to the last vendor (the
  // classes are a few hundred lines). The text's end when there are none.
  std::size_t class_section() {
    if (classes_) return *classes_;
    std::size_t first = text_.size();
    std::size_t end = text_.size();  // end of the line to read next
    if (end > 0 && text_[end - 1] == '\n') --end;
    while (end > 0) {
      const void* nl = ::memrchr(text_.data(), '\n', end);
      const std::size_t start =
          nl == nullptr ? 0
                        : static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) + 1;
      ++lines_read_;
      if (auto key = top_level_key(text_.substr(start, end - start))) {
        if (*key < kClassKey) break;
        first = start;
      }
      if (start == 0) break;
      end = start - 1;
    }
    classes_ = first;
    return first;
  }

  // Moves the next line to read forward, and the last read back, over spans of lines that an
  // earlier probe found to have no top-level key.
  // The start of the first known span from `fwd` on and the end of the last one up to `back`,
  // if nearer than `ahead` and `behind`.
  void spans_near(std::size_t fwd, std::size_t back, std::size_t& ahead,
                  std::size_t& behind) const {
    if (auto it = spans_.lower_bound(fwd); it != spans_.end() && it->first < ahead) {
      ahead = it->first;
    }
    if (auto it = spans_.lower_bound(back); it != spans_.begin()) {
      --it;
      if (it->second > behind) behind = it->second;
    }
  }

  void skip_known(std::size_t& fwd, std::size_t& back, std::size_t lo, std::size_t hi) const {
    while (fwd < hi) {
      auto it = spans_.upper_bound(fwd);  // the span holding fwd is the one before
      if (it == spans_.begin()) break;
      --it;
      if (fwd >= it->second) break;
      fwd = std::min(it->second, hi);
    }
    while (back > lo) {
      auto it = spans_.lower_bound(back);  // the span ending at or after back starts before it
      if (it == spans_.begin()) break;
      --it;
      if (it->second < back) break;
      back = std::max(it->first, lo);
    }
  }

  template <class KeyOf>
  std::optional<KeyLine> key_line(std::size_t start, std::size_t end, KeyOf& key_of) {
    ++lines_read_;
    if (auto key = key_of(text_.substr(start, end - start))) return KeyLine{start, end, *key};
    return std::nullopt;
  }

  std::string_view text_;
  std::size_t lines_read_ = 0;
  bool out_of_order_ = false;
  std::optional<std::size_t> classes_;        ///< class_section(), once read
  std::map<std::size_t, KeyLine> known_;      ///< top-level key lines found, by offset
  std::map<std::size_t, std::size_t> spans_;  ///< [start, end) of lines without a top-level key
};

// The names of `queries` through the binary search; nullopt when a vendor or class is not where
// the sorted order puts it (absent, or the file is not sorted): then only the full scan can tell.
std::optional<PciNames> sorted_names(std::string_view text, std::span<const PciNameQuery> queries,
                                     PciIdsLookupStats* stats) {
  std::set<std::uint16_t> want_vendor;
  std::set<std::pair<std::uint16_t, std::uint16_t>> want_device;
  std::set<std::uint16_t> want_class;
  for (const PciNameQuery& q : queries) {
    want_vendor.insert(q.vendor_id);
    want_device.insert({q.vendor_id, q.device_id});
    want_class.insert(q.class_id);
  }
  // Each lookup reads lines near a few dozen offsets: for thousands of IDs one pass is cheaper.
  if (want_device.size() > kMostSortedLookups) return std::nullopt;
  SortedIds ids(text);
  PciNames names;
  std::map<std::uint16_t, SortedIds::Block> vendor_blocks;
  for (std::uint16_t vendor : want_vendor) {
    auto b = ids.block(vendor);
    if (!b) return std::nullopt;
    names.vendors[vendor] = name_after(ids.line(b->head), 4);
    vendor_blocks.emplace(vendor, *b);
  }
  // A device missing from its vendor's block is missing: each vendor has one block.
  for (const auto& [vendor, device] : want_device) {
    const SortedIds::Block& b = vendor_blocks.at(vendor);
    if (auto line = ids.entry(b, device, 4)) {
      names.devices[{vendor, device}] = name_after(ids.line(*line).substr(1), 4);
    }
  }
  std::map<std::uint8_t, SortedIds::Block> class_blocks;
  for (std::uint16_t cls : want_class) {
    const auto base = static_cast<std::uint8_t>(cls >> 8);
    auto b = class_blocks.find(base);
    if (b == class_blocks.end()) {
      auto found = ids.block(kClassKey + base);
      if (!found) return std::nullopt;
      b = class_blocks.emplace(base, *found).first;
    }
    if (auto line = ids.entry(b->second, cls & 0xffU, 2)) {
      names.classes[cls] = name_after(ids.line(*line).substr(1), 2);
    } else {
      names.classes[cls] = base_class_fallback(name_after(ids.line(b->second.head), 4), cls);
    }
  }
  if (ids.out_of_order()) return std::nullopt;
  if (stats != nullptr) stats->lines_read = ids.lines_read();
  return names;
}

}  // namespace

PciNames lookup_pci_names(std::string_view text, std::span<const PciNameQuery> queries,
                          PciIdsLookupStats* stats) {
  if (auto names = sorted_names(text, queries, stats)) return std::move(*names);
  if (stats != nullptr) stats->full_scan = true;
  return scan_names(text, queries, [](std::size_t) {});
}

PciNames lookup_pci_names(const PciIdsFile& file, std::span<const PciNameQuery> queries,
                          PciIdsLookupStats* stats) {
  const std::string_view text = file.text();
  if (auto names = sorted_names(text, queries, stats)) return std::move(*names);
  if (stats != nullptr) stats->full_scan = true;
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t released = 0;
  // The pages scanned are given back as the scan goes (the kernel keeps them in its page cache):
  // mapped all at once, the 1.3 MB file would count whole in the process's peak RSS.
  return scan_names(text, queries, [&](std::size_t pos) {
    const std::size_t end = pos / page * page;
    if (end <= released) return;
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): the mapping is ours; madvise wants
    // void*
    char* start = const_cast<char*>(text.data()) + released;
    ::madvise(start, end - released, MADV_DONTNEED);
    released = end;
  });
}

std::optional<PciIdsFile> PciIdsFile::open_system() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("NODETOPO_PCI_IDS");
      env != nullptr && *env != '\0') {  // NOLINT
    candidates.emplace_back(env);
  }
  for (const char* path :
       {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids"}) {
    candidates.emplace_back(path);
  }
  for (const std::string& path : candidates) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
      ::close(fd);
      continue;
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (data == MAP_FAILED) continue;
    return PciIdsFile(data, size);
  }
  return std::nullopt;
}

PciIdsFile::~PciIdsFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

PciIdsFile::PciIdsFile(PciIdsFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

PciIdsFile& PciIdsFile::operator=(PciIdsFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace nodetopo::probes
