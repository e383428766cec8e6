#include "captures.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "test_support.hpp"

namespace nodetopo::test {

namespace fs = std::filesystem;

bool CaptureCase::has(std::string_view note) const {
  return std::find(notes.begin(), notes.end(), note) != notes.end();
}

std::vector<std::string> CaptureCase::values(std::string_view key) const {
  std::vector<std::string> out;
  const std::string prefix = std::string(key) + "=";
  for (const std::string& note : notes) {
    if (note.starts_with(prefix)) out.push_back(note.substr(prefix.size()));
  }
  return out;
}

std::vector<CaptureCase> read_capture_cases(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot read");
  std::vector<CaptureCase> cases;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = file.string() + ":" + std::to_string(number) + ": ";
    std::istringstream fields(line);
    CaptureCase c;
    if (!(fields >> c.name) || c.name.starts_with("#")) continue;
    if (!(fields >> c.tarball)) throw std::runtime_error(where + "no tarball after " + c.name);
    for (std::string note; fields >> note;) {
      const bool known = note == "lstopo-ignores-32bit-domains" || note == "lspci-fails" ||
                         note == "replay" || note.starts_with("lstopo-skips-bridge=");
      if (!known) throw std::runtime_error(where + "unknown note '" + note + "'");
      c.notes.push_back(note);
    }
    for (const CaptureCase& other : cases) {
      if (other.name == c.name) throw std::runtime_error(where + c.name + " is listed twice");
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

const std::vector<CaptureCase>& capture_cases() {
  static const std::vector<CaptureCase> cases =
      read_capture_cases(source_dir() / "tests/captures/cases.txt");
  return cases;
}

const CaptureCase& capture_case(const std::string& name) {
  for (const CaptureCase& c : capture_cases()) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("tests/captures/cases.txt has no case " + name);
}

std::vector<std::string> capture_names() {
  std::vector<std::string> names;
  for (const CaptureCase& c : capture_cases())
    names.push_back(c.name);
  std::sort(names.begin(), names.end());
  return names;
}

fs::path capture_root(const std::string& name) {
  return captures_dir() / "machines" / name;
}

fs::path capture_tarball(const CaptureCase& c) {
  if (c.tarball.starts_with("shared:")) return shared_dir() / "fixtures" / c.tarball.substr(7);
  return source_dir() / "tests/captures" / c.tarball;
}

}  // namespace nodetopo::test
