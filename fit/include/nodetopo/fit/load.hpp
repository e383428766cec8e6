// Reading the allocator's inputs from Kubernetes documents: YAML streams (several documents) or
// JSON, single objects or `List`s. ResourceClaims, ResourceClaimTemplates and Pods (which name
// claims and templates) become claims; DeviceClasses and ResourceSlices are collected; claims
// with a status.allocation contribute allocated devices. Every error names the file, the
// document and the field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/fit/model.hpp>

namespace nodetopo::fit {

/// A Pod's reference to a claim (resourceClaimName) or a template (resourceClaimTemplateName).
struct PodClaimRef {
  std::string pod;
  std::string entry;  ///< spec.resourceClaims[].name
  std::string claim;
  std::string claim_template;
};

struct Inputs {
  std::vector<ResourceClaim> claims;  ///< the claims to allocate, in input order (after finish)
  std::vector<DeviceClass> classes;
  std::vector<ResourceSlice> slices;
  std::vector<AllocatedDevice> allocated;

  // Collected while loading, resolved by finish_loading().
  std::vector<ResourceClaim> named_claims;     ///< ResourceClaims given as claims
  std::vector<ResourceClaim> named_templates;  ///< ResourceClaimTemplates given as claims
  std::vector<PodClaimRef> pod_refs;
  bool saw_pod = false;
};

/// What a document set is loaded as: the claims to fit, or claims already allocated.
enum class DocumentRole : std::uint8_t { kClaims, kClasses, kSlices, kAllocated };

/// Adds the objects of `text` (the contents of `source`) to `inputs`. Pods are resolved at
/// finish(): they may name claims and templates that come later or in another file.
Result<void> load_documents(std::string_view text, const std::string& source, DocumentRole role,
                            Inputs& inputs);

/// Resolves Pods to the claims and templates they name; an error names a missing one.
Result<void> finish_loading(Inputs& inputs);

/// Reads a Node object (YAML or JSON; a List of one Node too): its name and labels, which
/// node selectors are evaluated against.
Result<Node> load_node(std::string_view text, const std::string& source);

/// Parses one ResourceSlice object (JSON form) — used for slices rendered in-process.
Result<ResourceSlice> parse_resource_slice(const std::string& json_text, const std::string& source);

}  // namespace nodetopo::fit
