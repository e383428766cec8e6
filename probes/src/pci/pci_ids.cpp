#include <array>
#include <cstdlib>
#include <set>
#include <utility>

#include <fcntl.h>
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

// The scan behind both lookup_pci_names(): `consumed(pos)` is told, every kReleaseEvery bytes,
// that the text before `pos` will not be read again.
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
  // libpci's fallback for an unlisted subclass: the base class name and the number.
  for (std::uint16_t id : want_class) {
    if (names.classes.contains(id)) continue;
    auto base = base_names.find(static_cast<std::uint8_t>(id >> 8));
    if (base == base_names.end()) continue;
    std::array<char, 8> num{};
    std::snprintf(num.data(), num.size(), "%04x", id);
    names.classes[id] = base->second + " [" + num.data() + "]";
  }
  return names;
}

}  // namespace

PciNames lookup_pci_names(std::string_view text, std::span<const PciNameQuery> queries) {
  return scan_names(text, queries, [](std::size_t) {});
}

PciNames lookup_pci_names(const PciIdsFile& file, std::span<const PciNameQuery> queries) {
  const std::string_view text = file.text();
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
