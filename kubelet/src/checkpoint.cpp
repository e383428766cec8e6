// The checkpoint of prepared claims: {"version": 1, "claims": {uid: {...}}}, replaced atomically.
#include <fstream>
#include <sstream>

#include <nodetopo/kubelet/checkpoint.hpp>

namespace nodetopo::kubelet {

namespace {

nlohmann::json device_to_json(const PreparedDevice& d) {
  return {{"request", d.allocation.request},   {"pool", d.allocation.pool},
          {"device", d.allocation.device},     {"shareID", d.allocation.share_id},
          {"consumed", d.allocation.consumed}, {"cdiDeviceIDs", d.cdi_ids}};
}

PreparedDevice device_from_json(const nlohmann::json& j) {
  PreparedDevice d;
  d.allocation.request = j.at("request").get<std::string>();
  d.allocation.pool = j.at("pool").get<std::string>();
  d.allocation.device = j.at("device").get<std::string>();
  d.allocation.share_id = j.value("shareID", "");
  d.allocation.consumed = j.value("consumed", std::map<std::string, std::string>{});
  d.cdi_ids = j.at("cdiDeviceIDs").get<std::vector<std::string>>();
  return d;
}

}  // namespace

Result<Checkpoint> load_checkpoint(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Checkpoint{};
  std::stringstream text;
  text << in.rdbuf();
  Checkpoint out;
  try {
    const nlohmann::json j = nlohmann::json::parse(text.str());
    if (j.at("version").get<int>() != 1)
      return make_error(ErrorCode::kMalformed, "unknown checkpoint version", path);
    for (const auto& [uid, c] : j.at("claims").items()) {
      PreparedClaim claim;
      claim.name_space = c.at("namespace").get<std::string>();
      claim.name = c.at("name").get<std::string>();
      claim.spec_file = c.at("specFile").get<std::string>();
      for (const auto& d : c.at("devices"))
        claim.devices.push_back(device_from_json(d));
      out.claims.emplace(uid, std::move(claim));
    }
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::kMalformed,
                      std::string("checkpoint is damaged (") + e.what() +
                          "); move it away only once no pod uses a prepared claim",
                      path);
  }
  return out;
}

Result<void> save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  nlohmann::json claims = nlohmann::json::object();
  for (const auto& [uid, c] : checkpoint.claims) {
    nlohmann::json devices = nlohmann::json::array();
    for (const PreparedDevice& d : c.devices)
      devices.push_back(device_to_json(d));
    claims[uid] = {{"namespace", c.name_space},
                   {"name", c.name},
                   {"specFile", c.spec_file},
                   {"devices", devices}};
  }
  const nlohmann::json j = {{"version", 1}, {"claims", claims}};
  return write_file_atomic(path, j.dump(2) + "\n");
}

}  // namespace nodetopo::kubelet
