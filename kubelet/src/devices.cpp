// Small helpers of the device description handed to the plugin.
#include <nodetopo/kubelet/devices.hpp>

namespace nodetopo::kubelet {

std::optional<std::string> NodeDevice::string_attribute(const std::string& key) const {
  const auto attrs = slice_device.find("attributes");
  if (attrs == slice_device.end() || !attrs->is_object()) return std::nullopt;
  const auto it = attrs->find(key);
  if (it == attrs->end() || !it->contains("string")) return std::nullopt;
  return (*it)["string"].get<std::string>();
}

std::string to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kNic:
      return "nic";
    case DeviceKind::kAccelerator:
      return "accelerator";
  }
  return "gpu";
}

}  // namespace nodetopo::kubelet
