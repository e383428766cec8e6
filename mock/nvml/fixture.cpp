// The fixture parser: one pass of the JSON pull reader (json_reader.hpp) over the text, each
// value read straight into the structs of fixture.hpp. Every error about a field names it
// ("devices[3].nvlinks[0].remote_pci_bus_id"); see docs/mock-nvml.md#parsing.
#include "fixture.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <type_traits>

#include "json_reader.hpp"

namespace nodetopo::mock_nvml {

namespace {

int compare(Str a, Str b) {
  const std::size_t n = a.size < b.size ? a.size : b.size;
  const int c = n == 0 ? 0 : std::memcmp(a.data, b.data, n);
  if (c != 0) return c;
  return a.size < b.size ? -1 : (a.size > b.size ? 1 : 0);
}

// Hex digits only, min_digits to max_digits of them (at most 8).
std::optional<std::uint32_t> parse_hex(Str text, std::size_t min_digits, std::size_t max_digits) {
  if (text.size < min_digits || text.size > max_digits) return std::nullopt;
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < text.size; ++i) {
    const char c = text.data[i];
    std::uint32_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<std::uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<std::uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<std::uint32_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    value = value << 4 | digit;
  }
  return value;
}

Str sub(Str s, std::size_t from, std::size_t count) {
  return {s.data + from, count};
}

constexpr Str operator""_s(const char* text, std::size_t size) {
  return {text, size};
}

// The members of each object the parser knows, by position (a bit each in a `seen` mask).
constexpr Str kRootKeys[] = {"driver_version"_s, "cuda_driver_version"_s, "fail"_s, "devices"_s};
constexpr Str kDeviceKeys[] = {
    "index"_s,        "pci_bus_id"_s, "pci_device_id"_s, "pci_subsystem_id"_s,
    "uuid"_s,         "name"_s,       "serial"_s,        "memory_total_bytes"_s,
    "architecture"_s, "numa_node"_s,  "fabric"_s,        "nvlinks"_s,
    "fail"_s};
constexpr Str kLinkKeys[] = {"link"_s, "active"_s, "remote_pci_bus_id"_s, "remote_type"_s};
constexpr Str kFabricKeys[] = {"cluster_uuid"_s, "clique_id"_s, "state"_s, "status"_s};

template <std::size_t N>
int key_index(Str key, const Str (&keys)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if (key.size == keys[i].size && key.data[0] == keys[i].data[0] &&
        std::memcmp(key.data, keys[i].data, key.size) == 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

constexpr unsigned bit(int i) {
  return 1U << i;
}

// The lists being read, kept with each entry's position in the text's array/object, so that a
// sort by key keeps the text's order among equal keys.
struct PendingFail {
  FailEntry entry;
  std::uint32_t position;
};
struct PendingLink {
  NvLink link;
  std::uint32_t position;
};

class Parser {
 public:
  Parser(const char* text, std::size_t size, Fixture& f) : r_(text, size), f_(f) {}
  ~Parser() {
    devices_.free();
    links_.free();
    fails_.free();
    message_.free();
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  bool fixture();
  bool syntax_failed() const { return r_.failed(); }
  const char* syntax_error() const { return r_.error(); }
  const Text& message() const { return message_; }

 private:
  // ---- The path of the value being read, for messages
  struct Part {
    Str key;  // a member name, or {} for an array index
    std::uint32_t index;
  };
  // Pushes a member name or array index onto the path for the guard's lifetime.
  class Within {
   public:
    Within(Parser& p, Str key) : p_(p) { p_.push({key, 0}); }
    Within(Parser& p, std::uint32_t index) : p_(p) { p_.push({{}, index}); }
    ~Within() { --p_.depth_; }
    Within(const Within&) = delete;
    Within& operator=(const Within&) = delete;

   private:
    Parser& p_;
  };
  void push(Part part) {
    if (depth_ < kMaxPath) path_[depth_] = part;
    ++depth_;
  }

  // Starts the message of an error about the value being read: its path and ": "; the caller
  // appends what is wrong to the text returned, then returns false. The first error ends the
  // parse, so there is only ever one message.
  Text& invalid() {
    message_.clear();
    for (int i = 0; i < depth_ && i < kMaxPath; ++i) {
      if (path_[i].key.data != nullptr) {
        if (i > 0) message_.append('.');
        message_.append(path_[i].key);
      } else {
        message_.append('[');
        message_.append_unsigned(path_[i].index);
        message_.append(']');
      }
    }
    if (depth_ > 0) message_.append(": ");
    return message_;
  }
  bool out_of_memory() {
    invalid().append("out of memory");
    return false;
  }
  bool missing(Str key) {
    Text& m = invalid();
    m.append("missing \"");
    m.append(key);
    m.append('"');
    return false;
  }
  // "'<text>' is not ...".
  bool not_a(Str text, const char* what) {
    Text& m = invalid();
    m.append('\'');
    m.append(text);
    m.append("' is not ");
    m.append(what);
    return false;
  }

  // ---- Values
  // The next value's type, or false (a syntax error).
  bool type(JsonType& t) { return r_.peek(t); }
  bool expect(JsonType want, const char* expected) {
    JsonType t{};
    if (!type(t)) return false;
    if (t == want) return true;
    Text& m = invalid();
    m.append("expected ");
    m.append(expected);
    m.append(", found ");
    m.append(json_type_name(t));
    return false;
  }
  // Whether the next value is null (then read); absent optional fields.
  bool null_value(bool& is_null) {
    JsonType t{};
    if (!type(t)) return false;
    is_null = t == JsonType::kNull;
    return !is_null || r_.null();
  }
  bool string(Str& out) { return expect(JsonType::kString, "a string") && r_.string(out); }
  // A string kept in the fixture's arena.
  bool kept_string(std::optional<Str>& out) {
    Str s;
    if (!string(s)) return false;
    out = f_.arena.copy(s);
    return out->data != nullptr || out_of_memory();
  }
  bool boolean(bool& out) { return expect(JsonType::kBool, "true or false") && r_.boolean(out); }
  template <class Int>
  bool integer(Int& out);
  template <class Int>
  bool integer(std::optional<Int>& out) {
    Int value{};
    if (!integer(value)) return false;
    out = value;
    return true;
  }
  bool bus_id(BusId& out);
  bool bus_id(std::optional<BusId>& out) {
    BusId id;
    if (!bus_id(id)) return false;
    out = id;
    return true;
  }
  bool id_word(std::uint32_t& out);
  bool remote_type(std::optional<int>& out);
  bool cluster_uuid(std::array<unsigned char, 16>& out);
  bool fail_map(FailMap& out);
  bool fabric(Fabric& out);
  bool link(NvLink& out);
  bool nvlinks(Array<NvLink>& out);
  bool device(Device& out);
  bool devices();
  void resolve_remote_ids();

  // each(key) for each member of the object at the reader; false when one answers false.
  template <class Each>
  bool members(Each&& each) {
    if (!expect(JsonType::kObject, "an object")) return false;
    r_.begin_object();
    Str key;
    while (r_.next_member(key)) {
      if (!each(key)) return false;
    }
    return !r_.failed();
  }
  // each(index) for each element of the array at the reader, each within its [index].
  template <class Each>
  bool elements(Each&& each) {
    if (!expect(JsonType::kArray, "an array")) return false;
    r_.begin_array();
    std::uint32_t i = 0;
    while (r_.next_element()) {
      const Within at(*this, i);
      if (!each(i++)) return false;
    }
    return !r_.failed();
  }
  // The member `key` of a known object: the first one of its name counts, a later one is only
  // checked for syntax (as are the members no field is read from).
  template <std::size_t N, class Read>
  bool known_member(Str key, const Str (&keys)[N], unsigned& seen, Read&& read) {
    const int k = key_index(key, keys);
    if (k < 0 || (seen & bit(k)) != 0) return r_.skip();
    seen |= bit(k);
    const Within at(*this, keys[k]);
    return read(k);
  }

  static constexpr int kMaxPath = 8;  // the fixture's fields are at most 5 deep
  JsonReader r_;
  Fixture& f_;
  Part path_[kMaxPath]{};
  int depth_ = 0;
  Text message_;
  Vec<Device> devices_;
  Vec<PendingLink> links_;  // one device's, while it is read
  Vec<PendingFail> fails_;  // one fail map's, while it is read
};

// An integer that fits Int: fractions, exponents and integers out of Int's range (of any length)
// are refused.
template <class Int>
bool Parser::integer(Int& out) {
  if (!expect(JsonType::kNumber, "an integer")) return false;
  JsonNumber n;
  if (!r_.number(n)) return false;
  using Limits = std::numeric_limits<Int>;
  bool ok = n.fits;
  if (ok && n.negative) {
    if constexpr (std::is_signed_v<Int>) {
      const auto most =
          static_cast<std::uint64_t>(-(static_cast<std::int64_t>(Limits::min()) + 1)) + 1;
      ok = n.magnitude <= most;
      if (ok) out = static_cast<Int>(-static_cast<std::int64_t>(n.magnitude - 1) - 1);
    } else {
      ok = n.magnitude == 0;  // -0
      out = 0;
    }
  } else if (ok) {
    ok = n.magnitude <= static_cast<std::uint64_t>(Limits::max());
    if (ok) out = static_cast<Int>(n.magnitude);
  }
  if (ok) return true;
  Text& m = invalid();
  m.append("expected an integer from ");
  if constexpr (std::is_signed_v<Int>) {
    m.append_signed(Limits::min());
  } else {
    m.append_unsigned(Limits::min());
  }
  m.append(" to ");
  m.append_unsigned(static_cast<std::uint64_t>(Limits::max()));
  m.append(", found ");
  m.append(n.text);
  return false;
}

bool Parser::bus_id(BusId& out) {
  Str text;
  if (!string(text)) return false;
  const auto id = parse_bus_id(text);
  if (!id) return not_a(text, "domain:bus:device.function");
  out = *id;
  return true;
}

// "0x233010de" (as the contract writes it) or a plain JSON number.
bool Parser::id_word(std::uint32_t& out) {
  JsonType t{};
  if (!type(t)) return false;
  if (t != JsonType::kString) return integer(out);
  Str text;
  if (!r_.string(text)) return false;
  const bool prefixed =
      text.size >= 2 && text.data[0] == '0' && (text.data[1] == 'x' || text.data[1] == 'X');
  const auto value = parse_hex(prefixed ? sub(text, 2, text.size - 2) : text, 1, 8);
  if (!value) return not_a(text, "a 32-bit hex value");
  out = *value;
  return true;
}

bool Parser::remote_type(std::optional<int>& out) {
  // nvmlIntNvLinkDeviceType_t values.
  Str text;
  if (!string(text)) return false;
  if (text == str("gpu")) {
    out = 0x00;
  } else if (text == str("ibmnpu")) {
    out = 0x01;
  } else if (text == str("switch")) {
    out = 0x02;
  } else {
    return not_a(text, "gpu, switch or ibmnpu");
  }
  return true;
}

bool Parser::cluster_uuid(std::array<unsigned char, 16>& out) {
  Str text;
  if (!string(text)) return false;
  // 32 hex digits, '-' anywhere among them.
  std::size_t digits = 0;
  bool ok = true;
  for (std::size_t i = 0; i < text.size && ok; ++i) {
    if (text.data[i] == '-') continue;
    const auto nibble = digits < 32 ? parse_hex(sub(text, i, 1), 1, 1) : std::nullopt;
    ok = nibble.has_value();
    if (!ok) break;
    const auto n = static_cast<unsigned char>(*nibble);
    out[digits / 2] = digits % 2 == 0 ? static_cast<unsigned char>(n << 4)
                                      : static_cast<unsigned char>(out[digits / 2] | n);
    ++digits;
  }
  if (ok && digits == 32) return true;
  invalid().append("not a UUID (32 hex digits)");
  return false;
}

// Each member is type-checked; of a name given twice the first counts.
bool Parser::fail_map(FailMap& out) {
  fails_.size = 0;
  std::uint32_t position = 0;
  const bool read = members([&](Str key) {
    const Str name = f_.arena.copy(key);
    if (name.data == nullptr) return out_of_memory();
    const Within at(*this, name);
    PendingFail pending{{name, 0}, position++};
    if (!integer(pending.entry.code)) return false;
    return fails_.push(pending) || out_of_memory();
  });
  if (!read) return false;
  std::sort(fails_.data, fails_.data + fails_.size, [](const PendingFail& a, const PendingFail& b) {
    const int c = compare(a.entry.function, b.entry.function);
    return c != 0 ? c < 0 : a.position < b.position;
  });
  auto* entries = static_cast<FailEntry*>(f_.arena.allocate(sizeof(FailEntry) * fails_.size));
  if (fails_.size != 0 && entries == nullptr) return out_of_memory();
  std::uint32_t n = 0;
  for (std::uint32_t i = 0; i < fails_.size; ++i) {
    if (n > 0 && entries[n - 1].function == fails_.data[i].entry.function) continue;
    entries[n++] = fails_.data[i].entry;
  }
  out.entries = {entries, n};
  return true;
}

bool Parser::fabric(Fabric& out) {
  unsigned seen = 0;
  return members([&](Str key) {
    return known_member(key, kFabricKeys, seen, [&](int k) {
      bool is_null = false;
      if (!null_value(is_null)) return false;
      if (is_null) return true;  // the default
      switch (k) {
        case 0:
          return cluster_uuid(out.cluster_uuid);
        case 1:
          return integer(out.clique_id);
        case 2:
          return integer(out.state);
        default:
          return integer(out.status);
      }
    });
  });
}

// NVML describes no far end of an inactive link: those members are not looked at. As `active`
// may come after them, their values are read at the end of the object, from where they start.
bool Parser::link(NvLink& out) {
  unsigned seen = 0;
  // Where the values of remote_pci_bus_id and remote_type start, or kReadAlready.
  constexpr std::size_t kReadAlready = ~std::size_t{0};
  std::size_t remote_at[2] = {};
  const bool read = members([&](Str key) {
    return known_member(key, kLinkKeys, seen, [&](int k) {
      switch (k) {
        case 0:
          return integer(out.number);
        case 1:
          return boolean(out.active);
        default:
          // The usual order (topo mock build's): `active` known already.
          if ((seen & bit(1)) != 0) {
            if (!out.active) return r_.skip();
            remote_at[k - 2] = kReadAlready;
            return k == 2 ? bus_id(out.remote) : remote_type(out.remote_type);
          }
          remote_at[k - 2] = r_.offset();
          return r_.skip();
      }
    });
  });
  if (!read) return false;
  if ((seen & bit(0)) == 0) return missing(kLinkKeys[0]);
  if ((seen & bit(1)) == 0) return missing(kLinkKeys[1]);
  if (!out.active) return true;
  const std::size_t resume = r_.offset();
  for (int k = 2; k < 4; ++k) {
    if ((seen & bit(k)) == 0) return missing(kLinkKeys[k]);
    if (remote_at[k - 2] == kReadAlready) continue;
    const Within at(*this, kLinkKeys[k]);
    r_.seek(remote_at[k - 2]);
    if (!(k == 2 ? bus_id(out.remote) : remote_type(out.remote_type))) return false;
  }
  r_.seek(resume);
  return true;
}

bool Parser::nvlinks(Array<NvLink>& out) {
  links_.size = 0;
  const bool read = elements([&](std::uint32_t i) {
    PendingLink pending{{}, i};
    return link(pending.link) && (links_.push(pending) || out_of_memory());
  });
  if (!read) return false;
  std::sort(links_.data, links_.data + links_.size, [](const PendingLink& a, const PendingLink& b) {
    return a.link.number != b.link.number ? a.link.number < b.link.number : a.position < b.position;
  });
  // A number listed twice: named at its first repetition in the text.
  const PendingLink* twice = nullptr;
  for (std::uint32_t i = 1; i < links_.size; ++i) {
    const PendingLink& l = links_.data[i];
    if (l.link.number == links_.data[i - 1].link.number &&
        (twice == nullptr || l.position < twice->position)) {
      twice = &l;
    }
  }
  if (twice != nullptr) {
    const Within at(*this, twice->position);
    Text& m = invalid();
    m.append("link ");
    m.append_unsigned(twice->link.number);
    m.append(" listed twice");
    return false;
  }
  auto* links = static_cast<NvLink*>(f_.arena.allocate(sizeof(NvLink) * links_.size));
  if (links_.size != 0 && links == nullptr) return out_of_memory();
  for (std::uint32_t i = 0; i < links_.size; ++i)
    links[i] = links_.data[i].link;
  out = {links, links_.size};
  return true;
}

bool Parser::device(Device& d) {
  unsigned seen = 0;
  const bool read = members([&](Str key) {
    return known_member(key, kDeviceKeys, seen, [&](int k) {
      if (k >= 2) {  // all but index and pci_bus_id are optional: null is absent
        bool is_null = false;
        if (!null_value(is_null)) return false;
        if (is_null) return true;
      }
      switch (k) {
        case 0:
          return integer(d.index);
        case 1:
          return bus_id(d.bus_id);
        case 2:
          return id_word(d.pci_device_id);
        case 3:
          return id_word(d.pci_subsystem_id);
        case 4:
          return kept_string(d.uuid);
        case 5:
          return kept_string(d.name);
        case 6:
          return kept_string(d.serial);
        case 7:
          return integer(d.memory_total_bytes);
        case 8:
          return integer(d.architecture);
        case 9:
          return integer(d.numa_node);
        case 10: {
          Fabric fab;
          if (!fabric(fab)) return false;
          d.fabric = fab;
          return true;
        }
        case 11:
          return nvlinks(d.nvlinks);
        default:
          return fail_map(d.fail);
      }
    });
  });
  if (!read) return false;
  if ((seen & bit(0)) == 0) return missing(kDeviceKeys[0]);
  if ((seen & bit(1)) == 0) return missing(kDeviceKeys[1]);
  return true;
}

// The devices in index order: indices must be exactly 0..N-1, each once; the handle of index i
// is devices[i].
bool Parser::devices() {
  const bool read = elements([&](std::uint32_t) {
    Device d;
    return device(d) && (devices_.push(d) || out_of_memory());
  });
  if (!read) return false;
  const std::uint32_t n = devices_.size;
  if (n == 0) return true;
  auto* ordered = static_cast<Device*>(f_.arena.allocate(sizeof(Device) * n));
  auto* count = static_cast<std::uint32_t*>(std::calloc(n, sizeof(std::uint32_t)));
  if (ordered == nullptr || count == nullptr) {
    std::free(count);
    return out_of_memory();
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    const Device& d = devices_.data[i];
    if (d.index < n && count[d.index]++ == 0) ordered[d.index] = d;
  }
  // The first index, in order, that is missing or given twice (as a sort of the indices shows).
  for (std::uint32_t i = 0; i < n; ++i) {
    if (count[i] == 1) continue;
    const bool twice = count[i] > 1;
    std::free(count);
    invalid().append("device indices are not 0..N-1, each once: index ");
    message_.append_unsigned(i);
    message_.append(twice ? " twice" : " missing");
    return false;
  }
  std::free(count);
  f_.devices = {ordered, n};
  return true;
}

bool Parser::fixture() {
  unsigned seen = 0;
  const bool read = members([&](Str key) {
    return known_member(key, kRootKeys, seen, [&](int k) {
      bool is_null = false;
      if (!null_value(is_null)) return false;
      if (is_null) return true;
      switch (k) {
        case 0:
          return kept_string(f_.driver_version);
        case 1:
          return integer(f_.cuda_driver_version);
        case 2:
          return fail_map(f_.fail);
        default:
          return devices();
      }
    });
  });
  if (!read || !r_.at_end()) return false;
  resolve_remote_ids();
  return true;
}

// Gives every active link the PCI ids of the fixture device at its far end, so that
// nvmlDeviceGetNvLinkRemotePciInfo_v2 needs no search. Later indices win, as NVML's busId is
// expected to be unique anyway.
void Parser::resolve_remote_ids() {
  auto key = [](const BusId& id) {
    return (std::uint64_t{id.domain} << 16) | (std::uint64_t{id.bus} << 8) |
           (std::uint64_t{id.device} << 3) | id.function;
  };
  struct ByBusId {
    std::uint64_t key;
    const Device* device;
  };
  const Array<Device>& devices = f_.devices;
  auto* table = static_cast<ByBusId*>(std::malloc(sizeof(ByBusId) * (devices.size + 1)));
  if (table == nullptr) return;  // the ids stay 0, as of a far end that is no fixture device
  for (std::uint32_t i = 0; i < devices.size; ++i)
    table[i] = {key(devices.data[i].bus_id), &devices.data[i]};
  // By key, then index: the last of equal keys is the highest index.
  std::sort(table, table + devices.size, [](const ByBusId& a, const ByBusId& b) {
    return a.key != b.key ? a.key < b.key : a.device < b.device;
  });
  for (std::uint32_t i = 0; i < devices.size; ++i) {
    const Array<NvLink>& links = devices.data[i].nvlinks;
    for (NvLink* link_at = links.data; link_at != links.data + links.size; ++link_at) {
      NvLink& link = *link_at;
      if (!link.remote) continue;
      const std::uint64_t k = key(*link.remote);
      const ByBusId* after =
          std::upper_bound(table, table + devices.size, k,
                           [](std::uint64_t value, const ByBusId& e) { return value < e.key; });
      if (after == table || (after - 1)->key != k) continue;
      link.remote_pci_device_id = (after - 1)->device->pci_device_id;
      link.remote_pci_subsystem_id = (after - 1)->device->pci_subsystem_id;
    }
  }
  std::free(table);
}

}  // namespace

const int* FailMap::find(const char* function) const {
  if (entries.size == 0) return nullptr;
  const Str name = str(function);
  const FailEntry* e =
      std::lower_bound(entries.begin(), entries.end(), name,
                       [](const FailEntry& a, Str b) { return compare(a.function, b) < 0; });
  return e != entries.end() && e->function == name ? &e->code : nullptr;
}

const NvLink* Device::find_link(std::uint32_t number) const {
  const NvLink* l = std::lower_bound(nvlinks.begin(), nvlinks.end(), number,
                                     [](const NvLink& a, std::uint32_t b) { return a.number < b; });
  return l != nvlinks.end() && l->number == number ? l : nullptr;
}

std::optional<BusId> parse_bus_id(Str text) {
  // dddd[dddd]:bb:dd.f -- after the domain's 4 to 8 digits, a fixed layout.
  std::size_t colon = 0;
  while (colon < text.size && text.data[colon] != ':')
    ++colon;
  if (colon < 4 || colon > 8 || text.size != colon + 8 || text.data[colon + 3] != ':' ||
      text.data[colon + 6] != '.') {
    return std::nullopt;
  }
  auto domain = parse_hex(sub(text, 0, colon), 4, 8);
  auto bus = parse_hex(sub(text, colon + 1, 2), 2, 2);
  auto device = parse_hex(sub(text, colon + 4, 2), 2, 2);
  auto function = parse_hex(sub(text, colon + 7, 1), 1, 1);
  if (!domain || !bus || !device || !function || *device > 0x1f || *function > 7) {
    return std::nullopt;
  }
  return BusId{*domain, *bus, *device, *function};
}

Fixture* parse_fixture(const char* text, std::size_t size, Text& error) {
  error.clear();
  void* memory = std::malloc(sizeof(Fixture));
  if (memory == nullptr) {
    error.append("out of memory");
    return nullptr;
  }
  auto* f = ::new (memory) Fixture{};
  bool ok = false;
  {
    Parser parser(text, size, *f);
    ok = parser.fixture();
    if (!ok) {
      if (parser.syntax_failed()) {
        error.append("not valid JSON: ");
        error.append(parser.syntax_error());
      } else {
        // A field's error stopped the pass: the text after it must still be JSON, or that is
        // what is wrong with the file.
        JsonReader check(text, size);
        if (!check.skip() || !check.at_end()) {
          error.append("not valid JSON: ");
          error.append(check.error());
        } else {
          error.append(parser.message().view());
        }
      }
    }
  }
  if (!ok) {
    free_fixture(f);
    return nullptr;
  }
  return f;
}

void free_fixture(Fixture* fixture) {
  if (fixture == nullptr) return;
  fixture->arena.free();
  std::free(fixture);
}

}  // namespace nodetopo::mock_nvml
