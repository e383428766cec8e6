// Node selectors (core/v1 NodeSelector) evaluated against a Node as the kube-scheduler does
// (k8s.io/component-helpers/scheduling/corev1/nodeaffinity): terms ORed, an empty term
// selecting nothing, matchExpressions as label requirements (In, NotIn, Exists, DoesNotExist,
// Gt, Lt with the label-selector validation), matchFields with In/NotIn on metadata.name.
#pragma once

#include <string>

#include <nodetopo/base/error.hpp>
#include <nodetopo/fit/model.hpp>

namespace nodetopo::fit {

/// Whether `node` matches `selector`. An invalid selector (unknown operator, a value list that
/// does not fit the operator, a malformed key or value) is an error, as upstream: the whole
/// selector is refused before any term is tried.
Result<bool> node_selector_matches(const NodeSelector& selector, const Node& node);

/// Upstream's nodeMatches: a node name matches that node only, allNodes every node, else the
/// selector decides; nothing set matches no node.
Result<bool> node_selection_matches(const NodeSelection& selection, const Node& node);

/// The selector in the text form of messages: "region In [a b]; zone Exists" (terms joined by
/// " OR ").
std::string describe(const NodeSelector& selector);

}  // namespace nodetopo::fit
