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
    for (const Json& item : body.value("items", Json::array())) {
      const Json& spec = item["spec"];
      if (spec.value("nodeName", "") != node || spec.value("driver", "") != what.driver) continue;
      const std::string name = item["metadata"].value("name", "");
      const Json options_body = {{"apiVersion", "v1"},
                                 {"kind", "DeleteOptions"},
                                 {"preconditions", {{"uid", item["metadata"].value("uid", "")}}}};
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
    const Json meta = got.json()["metadata"];
    const Json ann = meta.value("annotations", Json::object());
    const std::string key(kOwnedLabelsAnnotation);
    if (ann.contains(key) && ann[key].is_string()) {
      const Json labels = meta.value("labels", Json::object());
      Json patch_labels = Json::object();
      std::stringstream ss(ann[key].get<std::string>());
      std::string k;
      while (std::getline(ss, k, ',')) {
        if (!k.empty() && labels.contains(k)) patch_labels[k] = nullptr;
      }
      Json patch = {{"metadata",
                     {{"resourceVersion", meta.value("resourceVersion", "")},
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
