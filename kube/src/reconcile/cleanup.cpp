// `topo cleanup`: the only code that removes what the publisher wrote, for uninstalling. Each
// step runs even when an earlier one failed, and only our objects are touched: slices listed by
// node AND driver, the NodeFeature of our name, the label keys our annotation lists, the NRT of
// the node.
#include <set>
#include <sstream>

#include "../log.hpp"
#include "sinks.hpp"

namespace nodetopo::kube {

CleanupReport cleanup(const ClientConfig& config, const ClientOptions& options,
                      const CleanupOptions& what) {
  CleanupReport report;
  ApiClient client(config, options);
  const std::string& node = what.node_name;

  // ResourceSlices of this node and driver, each deleted with its preconditions.
  const ApiResponse list = client.call(
      {"GET", kSlicesPath,
       encode_query({{"fieldSelector", "spec.nodeName=" + node + ",spec.driver=" + what.driver}}),
       "", "", "list", "resourceslices"});
  if (list.ok()) {
    const Json body = list.json();
    const Json& items = field(body, "items");
    if (!items.is_array()) {
      report.errors.push_back("list resourceslices (cluster-scoped): the answer is not a list");
    }
    for (const Json& item : items.is_array() ? items : Json::array()) {
      const Json& spec = field(item, "spec");
      if (str_field(spec, "nodeName") != node || str_field(spec, "driver") != what.driver) continue;
      const Json& meta = field(item, "metadata");
      const std::string name = str_field(meta, "name");
      if (name.empty()) continue;  // nothing to address a delete to
      const Json options_body = {{"apiVersion", "v1"},
                                 {"kind", "DeleteOptions"},
                                 {"preconditions", {{"uid", str_field(meta, "uid")}}}};
      const ApiResponse r =
          client.call({"DELETE", std::string(kSlicesPath) + "/" + percent_encode(name), "",
                       options_body.dump(), "application/json", "delete", "resourceslices"});
      if (r.ok()) {
        ++report.slices_deleted;
      } else if (r.status != 404) {
        report.errors.push_back(failure(r, "delete", "resourceslices", "", name).message);
      }
    }
  } else if (list.status != 404) {
    report.errors.push_back(failure(list, "list", "resourceslices", "", "").message);
  }

  // NodeFeature.
  std::string ns = what.nodefeature_namespace;
  if (ns.empty()) ns = config.name_space;
  if (ns.empty()) ns = "node-feature-discovery";
  const std::string nf_name = node + std::string(kNodeFeatureSuffix);
  const ApiResponse nf =
      client.call({"DELETE",
                   "/apis/nfd.k8s-sigs.io/v1alpha1/namespaces/" + percent_encode(ns) +
                       "/nodefeatures/" + percent_encode(nf_name),
                   "", "", "", "delete", "nodefeatures"});
  if (nf.ok()) {
    report.nodefeature_deleted = true;
  } else if (nf.status != 404) {
    report.errors.push_back(failure(nf, "delete", "nodefeatures", ns, nf_name).message);
  }

  // Owned Node labels and the annotation that lists them.
  const std::string node_path = "/api/v1/nodes/" + percent_encode(node);
  const ApiResponse got = client.call({"GET", node_path, "", "", "", "get", "nodes"});
  if (got.ok()) {
    const Json n = got.json();
    const Json& meta = field(n, "metadata");
    const Json& ann = field(meta, "annotations");
    const std::string key(kOwnedLabelsAnnotation);
    if (!n.is_object()) {
      report.errors.push_back("get nodes " + node + " (cluster-scoped): the answer is not a Node");
    } else if (field(ann, key.c_str()).is_string()) {
      const Json& labels = field(meta, "labels");
      Json patch_labels = Json::object();
      std::stringstream ss(str_field(ann, key.c_str()));
      std::string k;
      while (std::getline(ss, k, ',')) {
        if (!k.empty() && !field(labels, k.c_str()).is_null()) patch_labels[k] = nullptr;
      }
      Json patch = {{"metadata",
                     {{"resourceVersion", str_field(meta, "resourceVersion")},
                      {"annotations", {{key, nullptr}}}}}};
      if (!patch_labels.empty()) patch["metadata"]["labels"] = patch_labels;
      const ApiResponse r = client.call(
          {"PATCH", node_path, "", patch.dump(), "application/merge-patch+json", "patch", "nodes"});
      if (r.ok()) {
        report.labels_removed = static_cast<int>(patch_labels.size());
      } else {
        report.errors.push_back(failure(r, "patch", "nodes", "", node).message);
      }
    }
  } else {
    report.errors.push_back(failure(got, "get", "nodes", "", node).message);
  }

  // NodeResourceTopology.
  const ApiResponse nrt = client.call(
      {"DELETE",
       "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies/" + percent_encode(node), "", "",
       "", "delete", "noderesourcetopologies"});
  if (nrt.ok()) {
    report.nrt_deleted = true;
  } else if (nrt.status != 404) {
    report.errors.push_back(failure(nrt, "delete", "noderesourcetopologies", "", node).message);
  }
  return report;
}

}  // namespace nodetopo::kube
