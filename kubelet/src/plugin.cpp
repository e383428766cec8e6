// The two gRPC servers of the plugin: registration (pluginregistration.Registration) and the DRA
// service in both versions the kubelets of 1.32+ call, plus the thread that keeps the sockets
// present and offers the registration again after a refusal.
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <nodetopo/kubelet/plugin.hpp>

#include "dra/v1/api.grpc.pb.h"
#include "dra/v1beta1/api.grpc.pb.h"
#include "pluginregistration/v1/api.grpc.pb.h"

namespace nodetopo::kubelet {

namespace fs = std::filesystem;
namespace drav1 = k8s::io::kubelet::pkg::apis::dra::v1;
namespace drav1beta1 = k8s::io::kubelet::pkg::apis::dra::v1beta1;

namespace {

bool is_socket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

/// The DRA service of one API version: the messages differ only in their package.
template <class Base, class PrepReq, class PrepResp, class UnprepReq, class UnprepResp>
class DraService final : public Base {
 public:
  DraService(DriverState& state, PluginHealth& health, std::mutex& health_mutex)
      : state_(state), health_(health), health_mutex_(health_mutex) {}

  grpc::Status NodePrepareResources(grpc::ServerContext* /*context*/, const PrepReq* request,
                                    PrepResp* response) override {
    for (const auto& c : request->claims()) {
      const PrepareResult r = state_.prepare({c.namespace_(), c.uid(), c.name()});
      auto& out = (*response->mutable_claims())[c.uid()];
      if (!r.error.empty()) {
        spdlog::warn("prepare {}/{}: {}", c.namespace_(), c.name(), r.error);
        out.set_error(r.error);
        continue;
      }
      for (const PreparedDevice& d : r.devices) {
        auto* device = out.add_devices();
        device->add_request_names(d.allocation.request);
        device->set_pool_name(d.allocation.pool);
        device->set_device_name(d.allocation.device);
        for (const std::string& id : d.cdi_ids)
          device->add_cdi_device_ids(id);
      }
    }
    std::lock_guard lock(health_mutex_);
    health_.prepares += static_cast<std::uint64_t>(request->claims_size());
    return grpc::Status::OK;
  }

  grpc::Status NodeUnprepareResources(grpc::ServerContext* /*context*/, const UnprepReq* request,
                                      UnprepResp* response) override {
    for (const auto& c : request->claims()) {
      const std::string error = state_.unprepare({c.namespace_(), c.uid(), c.name()});
      auto& out = (*response->mutable_claims())[c.uid()];
      if (!error.empty()) {
        spdlog::warn("unprepare {}/{}: {}", c.namespace_(), c.name(), error);
        out.set_error(error);
      }
    }
    std::lock_guard lock(health_mutex_);
    health_.unprepares += static_cast<std::uint64_t>(request->claims_size());
    return grpc::Status::OK;
  }

 private:
  DriverState& state_;
  PluginHealth& health_;
  std::mutex& health_mutex_;
};

using DraV1 = DraService<drav1::DRAPlugin::Service, drav1::NodePrepareResourcesRequest,
                         drav1::NodePrepareResourcesResponse, drav1::NodeUnprepareResourcesRequest,
                         drav1::NodeUnprepareResourcesResponse>;
using DraV1beta1 =
    DraService<drav1beta1::DRAPlugin::Service, drav1beta1::NodePrepareResourcesRequest,
               drav1beta1::NodePrepareResourcesResponse, drav1beta1::NodeUnprepareResourcesRequest,
               drav1beta1::NodeUnprepareResourcesResponse>;

}  // namespace

class Plugin::Impl : public pluginregistration::Registration::Service {
 public:
  Impl(PluginConfig config, std::unique_ptr<DriverState> state)
      : config_(std::move(config)),
        state_(std::move(state)),
        v1_(*state_, health_, health_mutex_),
        v1beta1_(*state_, health_, health_mutex_),
        retry_delay_(config_.registration_retry) {}

  ~Impl() override { stop(); }

  Result<void> start() {
    for (const std::string& dir :
         {config_.registry_dir, fs::path(config_.dra_socket()).parent_path().string(),
          fs::path(config_.checkpoint_file()).parent_path().string(), config_.cdi_dir}) {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) return make_error(ErrorCode::kIo, "cannot create directory: " + ec.message(), dir);
    }
    // DRA first: the kubelet may call it as soon as it sees the registration socket.
    if (auto r = start_dra(); !r) return r;
    if (auto r = start_registration(); !r) return r;
    monitor_ = std::thread([this] { monitor(); });
    return {};
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_.notify_all();
    if (monitor_.joinable()) monitor_.join();
    stop_server(registration_, config_.registration_socket());
    stop_server(dra_, config_.dra_socket());
  }

  // pluginregistration.Registration
  grpc::Status GetInfo(grpc::ServerContext* /*context*/,
                       const pluginregistration::InfoRequest* /*request*/,
                       pluginregistration::PluginInfo* info) override {
    info->set_type("DRAPlugin");
    info->set_name(config_.driver);
    info->set_endpoint(config_.dra_socket());
    info->add_supported_versions(kDraServiceV1);
    info->add_supported_versions(kDraServiceV1beta1);
    return grpc::Status::OK;
  }

  grpc::Status NotifyRegistrationStatus(
      grpc::ServerContext* /*context*/, const pluginregistration::RegistrationStatus* status,
      pluginregistration::RegistrationStatusResponse* /*response*/) override {
    std::lock_guard lock(health_mutex_);
    health_.registered = status->plugin_registered();
    if (status->plugin_registered()) {
      spdlog::info("registered with the kubelet as DRA driver {} ({})", config_.driver,
                   config_.dra_socket());
      health_.registration_error.clear();
      retry_delay_ = config_.registration_retry;
      retry_at_.reset();
    } else {
      health_.registration_error = status->error();
      spdlog::error(
          "the kubelet refused the registration of DRA driver {}: {}; offering it "
          "again in {} ms",
          config_.driver, status->error(), retry_delay_.count());
      retry_at_ = std::chrono::steady_clock::now() + retry_delay_;
      retry_delay_ = std::min(retry_delay_ * 2, std::chrono::milliseconds(300'000));
      wake_.notify_all();
    }
    return grpc::Status::OK;
  }

  PluginHealth health() const {
    std::lock_guard lock(health_mutex_);
    return health_;
  }

  DriverState& state() { return *state_; }

 private:
  static void stop_server(std::unique_ptr<grpc::Server>& server, const std::string& socket) {
    if (!server) return;
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    server->Wait();
    server.reset();
    std::error_code ec;
    fs::remove(socket, ec);  // only ours: the name carries this instance's UID
  }

  Result<std::unique_ptr<grpc::Server>> serve(const std::string& socket,
                                              std::vector<grpc::Service*> services) {
    std::error_code ec;
    fs::remove(socket, ec);  // a stale socket of a dead instance with our name
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
    for (grpc::Service* s : services)
      builder.RegisterService(s);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (!server) return make_error(ErrorCode::kIo, "cannot listen on the socket", socket);
    return server;
  }

  Result<void> start_dra() {
    auto s = serve(config_.dra_socket(), {&v1_, &v1beta1_});
    if (!s) return s.error();
    dra_ = std::move(*s);
    return {};
  }

  Result<void> start_registration() {
    auto s = serve(config_.registration_socket(), {this});
    if (!s) return s.error();
    registration_ = std::move(*s);
    std::lock_guard lock(health_mutex_);
    ++health_.registration_attempts;
    return {};
  }

  void monitor() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, config_.socket_check);
      if (stopping_) break;
      lock.unlock();
      check_sockets();
      lock.lock();
    }
  }

  void check_sockets() {
    bool reoffer = false;
    {
      std::lock_guard lock(health_mutex_);
      if (retry_at_ && std::chrono::steady_clock::now() >= *retry_at_) {
        retry_at_.reset();
        reoffer = true;
      }
    }
    bool restarted = false;
    if (!is_socket(config_.dra_socket())) {
      spdlog::warn("DRA socket {} disappeared; serving it again", config_.dra_socket());
      stop_server(dra_, config_.dra_socket());
      if (auto r = start_dra(); !r) spdlog::error("{}", r.error().describe());
      restarted = true;
      reoffer = true;  // the kubelet dropped the plugin with its endpoint: register again
    }
    if (reoffer || !is_socket(config_.registration_socket())) {
      if (!reoffer) {
        spdlog::warn("registration socket {} disappeared; offering it again",
                     config_.registration_socket());
        restarted = true;
      }
      stop_server(registration_, config_.registration_socket());
      if (auto r = start_registration(); !r) spdlog::error("{}", r.error().describe());
    }
    if (restarted) {
      std::lock_guard lock(health_mutex_);
      ++health_.socket_restarts;
    }
  }

  PluginConfig config_;
  std::unique_ptr<DriverState> state_;
  mutable std::mutex health_mutex_;
  PluginHealth health_;
  DraV1 v1_;
  DraV1beta1 v1beta1_;
  std::unique_ptr<grpc::Server> dra_;
  std::unique_ptr<grpc::Server> registration_;
  std::chrono::milliseconds retry_delay_;
  std::optional<std::chrono::steady_clock::time_point> retry_at_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread monitor_;
};

Plugin::Plugin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plugin::~Plugin() {
  stop();
}

Result<std::unique_ptr<Plugin>> Plugin::start(PluginConfig config,
                                              std::unique_ptr<DriverState> state) {
  auto impl = std::make_unique<Impl>(std::move(config), std::move(state));
  if (auto r = impl->start(); !r) return r.error();
  return std::unique_ptr<Plugin>(new Plugin(std::move(impl)));
}

void Plugin::wait(const std::atomic<bool>& stop_flag) {
  while (!stop_flag.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

void Plugin::stop() {
  if (impl_) impl_->stop();
}

PluginHealth Plugin::health() const {
  return impl_->health();
}
DriverState& Plugin::state() {
  return impl_->state();
}

}  // namespace nodetopo::kubelet
