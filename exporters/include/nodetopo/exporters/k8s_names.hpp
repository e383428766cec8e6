// Kubernetes naming and value rules shared by the Kubernetes exporters (ResourceSlices, labels,
// NodeFeature, NodeResourceTopology): DNS labels and subdomains, C identifiers, qualified
// attribute names, label keys and values, strict semantic versions and resource quantities.
//
// Each check returns an empty string when the value is valid, else a sentence saying what is wrong
// (without naming the object: callers prefix the object and field).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nodetopo::exporters::k8s {

/// RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
std::string check_dns_label(std::string_view value);
/// RFC 1123 subdomain: dot-separated DNS labels, at most `max_length` (253) characters.
std::string check_dns_subdomain(std::string_view value, std::size_t max_length = 253);
/// C identifier: [A-Za-z_][A-Za-z0-9_]*, at most `max_length` characters.
std::string check_c_identifier(std::string_view value, std::size_t max_length);

/// Name of a device attribute or capacity: a C identifier of at most 32 characters, optionally
/// prefixed by "<DNS subdomain of at most 63 characters>/".
std::string check_qualified_attribute_name(std::string_view name);

/// Label key: optional "<DNS subdomain <= 253>/" prefix, then a name of at most 63 characters
/// matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]. Keys under kubernetes.io or k8s.io (and
/// their subdomains) are refused: those prefixes are reserved for Kubernetes itself.
std::string check_label_key(std::string_view key);
/// Label value: empty, or at most 63 characters matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
std::string check_label_value(std::string_view value);

/// Turns free text (a product name) into a valid label value deterministically: runs of
/// characters outside [A-Za-z0-9_.-] become one '-', leading/trailing non-alphanumerics are
/// dropped, the result is cut to 63 characters (and trimmed again). "NVIDIA H100 80GB HBM3" ->
/// "NVIDIA-H100-80GB-HBM3". Empty when nothing usable remains.
std::string sanitize_label_value(std::string_view text);

/// Strict semantic version 2.0.0 (no leading zeros in numeric identifiers, no "v" prefix).
std::string check_semver(std::string_view version);
/// Normalises a vendor version to strict semver: numeric components lose leading zeros
/// ("535.104.05" -> "535.104.5"), missing minor/patch become 0 ("550.54" -> "550.54.0"). nullopt
/// when the text is not a version at all ("unknown", "1.2.3.4", "").
std::optional<std::string> normalize_semver(std::string_view version);

/// A quantity as nodetopo writes it: exact, in the largest binary suffix that divides the
/// value (85899345920 -> "80Gi", 1536 -> "1536", 1048576 -> "1Mi").
std::string format_binary_quantity(std::uint64_t bytes);
/// Parses the quantity forms nodetopo writes and validates: a non-negative integer with an
/// optional binary (Ki..Ei) or decimal (k, M, G, T, P, E) suffix. nullopt for anything else,
/// including fractions and overflow.
std::optional<std::uint64_t> parse_quantity(std::string_view text);

/// RFC 3339 date-time, e.g. "2025-06-30T12:00:00Z" or "2025-06-30T12:00:00.5+02:00".
std::string check_rfc3339(std::string_view text);

}  // namespace nodetopo::exporters::k8s
