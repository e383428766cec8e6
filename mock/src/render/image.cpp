#include "render/image.hpp"

#include <array>
#include <cstdio>

namespace nodetopo::mock::detail {

void ImageWriter::parents(const std::string& path) {
  std::size_t slash = path.rfind('/');
  while (slash != std::string::npos && slash > 0) {
    if (!image_.dirs.insert(path.substr(0, slash)).second) break;  // its parents are known too
    slash = path.rfind('/', slash - 1);
  }
}

void ImageWriter::claim(const std::string& path) {
  if (image_.files.count(path) != 0 || image_.symlinks.count(path) != 0 ||
      image_.dirs.count(path) != 0) {
    conflicts_.push_back(path);
  }
}

void ImageWriter::file(const std::string& path, std::string content) {
  claim(path);
  parents(path);
  image_.files[path] = std::move(content);
}

void ImageWriter::attr(const std::string& path, std::string_view value) {
  std::string content(value);
  content += '\n';
  file(path, std::move(content));
}

void ImageWriter::link(const std::string& path, const std::string& target) {
  claim(path);
  parents(path);
  image_.symlinks[path] = relative_target(path, target);
}

void ImageWriter::dir(const std::string& path) {
  if (image_.files.count(path) != 0 || image_.symlinks.count(path) != 0) {
    conflicts_.push_back(path);
  }
  parents(path);
  image_.dirs.insert(path);
}

namespace {

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    if (end > pos) out.push_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::string relative_target(const std::string& link, const std::string& target) {
  std::vector<std::string_view> from = components(link);
  if (!from.empty()) from.pop_back();  // the link's own name
  const std::vector<std::string_view> to = components(target);
  std::size_t common = 0;
  while (common < from.size() && common < to.size() && from[common] == to[common])
    ++common;
  // A link to an ancestor goes up past it and back down, as sysfs writes it
  // ("device -> ../../../0000:60:00.0").
  if (common == to.size() && common > 0) --common;
  std::string out;
  for (std::size_t k = common; k < from.size(); ++k)
    out += "../";
  for (std::size_t k = common; k < to.size(); ++k) {
    out += to[k];
    if (k + 1 < to.size()) out += '/';
  }
  return out;
}

std::string cpumask(const CpuSet& set, std::uint32_t nbits) {
  const std::uint32_t words = nbits == 0 ? 1 : (nbits + 31) / 32;
  std::vector<std::uint32_t> value(words, 0);
  for (std::uint32_t cpu : set.members()) {
    if (cpu / 32 < words) value[cpu / 32] |= 1U << (cpu % 32);
  }
  std::string out;
  for (std::uint32_t w = words; w-- > 0;) {
    std::array<char, 16> buf{};
    int digits = 8;
    if (w == words - 1 && nbits % 32 != 0) digits = static_cast<int>((nbits % 32 + 3) / 4);
    std::snprintf(buf.data(), buf.size(), "%0*x", digits, value[w]);
    if (!out.empty()) out += ',';
    out += buf.data();
  }
  return out;
}

std::string link_speed_text(std::uint32_t mts) {
  switch (mts) {
    case 2500:
      return "2.5 GT/s PCIe";
    case 5000:
      return "5.0 GT/s PCIe";
    case 8000:
      return "8.0 GT/s PCIe";
    case 16000:
      return "16.0 GT/s PCIe";
    case 32000:
      return "32.0 GT/s PCIe";
    case 64000:
      return "64.0 GT/s PCIe";
    default:
      return "Unknown";
  }
}

std::string hex_id(std::uint32_t value, int digits) {
  std::array<char, 16> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%0*x", digits, value);
  return buf.data();
}

std::string kb_field(std::uint64_t bytes, int width) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%*llu kB", width,
                static_cast<unsigned long long>(bytes / 1024));
  return buf.data();
}

}  // namespace nodetopo::mock::detail
