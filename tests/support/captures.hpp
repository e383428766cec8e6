// The real machines of tests/captures/cases.txt: one line each, naming the tarball and the notes
// on where a reference tool is known to disagree (the format is at the top of that file; how to
// add a machine: tests/README.md). The `captures` ctest fixture unpacks them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nodetopo::test {

/// One line of tests/captures/cases.txt.
struct CaptureCase {
  std::string name;                ///< the directory its tarball unpacks to
  std::string tarball;             ///< as written: a file of tests/captures/, or shared:<path>
  std::vector<std::string> notes;  ///< known tool disagreements and `replay`, validated
  /// Whether `note` is among the notes.
  [[nodiscard]] bool has(std::string_view note) const;
  /// The values of the notes "<key>=<value>".
  [[nodiscard]] std::vector<std::string> values(std::string_view key) const;
};

/// Every case of a file in the format of cases.txt, in file order. A malformed line (no
/// tarball, an unknown note, a name twice) throws std::runtime_error naming the file and line.
std::vector<CaptureCase> read_capture_cases(const std::filesystem::path& file);
/// Every line of tests/captures/cases.txt (read once).
const std::vector<CaptureCase>& capture_cases();
/// The case named `name`; throws when there is none.
const CaptureCase& capture_case(const std::string& name);
/// Names of every case, sorted (the parameters of the per-machine suites).
std::vector<std::string> capture_names();
/// Where the `captures` fixture unpacked case `name`: <captures_dir()>/machines/<name>.
std::filesystem::path capture_root(const std::string& name);
/// The tarball of a case on disk.
std::filesystem::path capture_tarball(const CaptureCase& c);

}  // namespace nodetopo::test
