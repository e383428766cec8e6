// The one strict YAML reader of nodetopo (mock profiles, the export settings, the agent config):
// every key must be known, duplicate keys are refused, every scalar must parse completely, and the
// first problem is kept with the line and field path it concerns ("line 4: sharing.cores: ...").
// Reading goes on after an error (values come back empty) so callers need no early returns; they
// check failed() once at the end.
//
//   yaml::Reader r(source_name);
//   yaml::Fields f(r, document_root, "");
//   auto cores = yaml::read_uint(r, f.take("cores"), f.path("cores"), 10000, 1);
//   f.done();                       // "unknown key (expected one of: ...)" for anything else
//   if (r.failed()) return r.error();
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <nodetopo/base/error.hpp>

namespace nodetopo::yaml {

/// Collects the first error of one document's parse. `source` names the file (the Error's path);
/// `document` is what the top level is called in messages ("profile", "settings").
class Reader {
 public:
  explicit Reader(std::string source, std::string document = "document")
      : source_(std::move(source)), document_(std::move(document)) {}

  /// Records "line N: field: message" unless an error is already recorded.
  void fail(const YAML::Node& node, std::string_view field, std::string_view message);
  void fail(int line, std::string_view field, std::string_view message);

  [[nodiscard]] bool failed() const { return error_.has_value(); }
  [[nodiscard]] const Error& error() const { return *error_; }
  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] const std::string& document() const { return document_; }

 private:
  std::string source_;
  std::string document_;
  std::optional<Error> error_;
};

/// 1-based line of a node, 0 when unknown.
int line_of(const YAML::Node& node);

/// True for a node that is undefined (key absent) or null.
bool is_absent(const YAML::Node& node);

/// A scalar's text; nullopt without error when absent, nullopt with "expected <expected>, got a
/// list|mapping" recorded when it is not a scalar.
std::optional<std::string> read_scalar(Reader& r, const YAML::Node& n, const std::string& path,
                                       std::string_view expected);

/// A YAML mapping whose keys are consumed one by one; done() reports keys nobody asked for.
class Fields {
 public:
  /// `node` must be a mapping (an absent node reads as an empty one).
  Fields(Reader& reader, const YAML::Node& node, std::string path);

  /// The value under `key` (undefined when absent); marks the key as known.
  YAML::Node take(std::string_view key);
  /// Like take(), but records "required field missing" when absent.
  YAML::Node require(std::string_view key);
  /// "path.key" (or "key" at the top level).
  [[nodiscard]] std::string path(std::string_view key) const;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] int line() const { return line_of(node_); }
  [[nodiscard]] Reader& reader() const { return reader_; }

  /// Reports the first unknown key, listing the accepted ones.
  void done();

 private:
  static YAML::Node mapping_or_empty(const YAML::Node& node);

  Reader& reader_;
  YAML::Node node_;
  std::string path_;
  std::vector<std::string> known_;
};

/// Scalar readers: an absent (undefined or null) node gives nullopt without error; a present
/// one that does not parse records an error naming `path`.
std::optional<std::string> read_string(Reader& r, const YAML::Node& n, const std::string& path);
/// Integers in decimal or 0x-hex, within [min, max].
std::optional<std::uint64_t> read_uint(Reader& r, const YAML::Node& n, const std::string& path,
                                       std::uint64_t max, std::uint64_t min = 0);
std::optional<std::int64_t> read_int(Reader& r, const YAML::Node& n, const std::string& path,
                                     std::int64_t min, std::int64_t max);
std::optional<bool> read_bool(Reader& r, const YAML::Node& n, const std::string& path);
/// Sizes: a byte count or "<number> <unit>" with B, KiB, MiB, GiB, TiB (e.g. "80 GiB").
std::optional<std::uint64_t> read_size(Reader& r, const YAML::Node& n, const std::string& path);
/// A scalar or a list of scalars, as a list of strings.
std::optional<std::vector<std::string>> read_string_list(Reader& r, const YAML::Node& n,
                                                         const std::string& path);
/// A mapping of strings to integers (NVML fault injection).
std::optional<std::vector<std::pair<std::string, std::int64_t>>> read_int_map(
    Reader& r, const YAML::Node& n, const std::string& path);

/// Parses a decimal or 0x-hex unsigned integer string completely.
std::optional<std::uint64_t> parse_number(std::string_view text);

}  // namespace nodetopo::yaml
