// DistGroup when Stagewise is built without c10d (-DSTAGEWISE_DISTRIBUTED=OFF).
#include "dist/dist_group.h"

namespace stagewise::engine::dist {

struct DistGroup::Impl {};
struct DistGroup::Pending {};

DistGroup::DistGroup(const DistOptions&, double, const std::string&, const std::string&) {
  throw std::runtime_error("this build has no distributed support: configure with -DSTAGEWISE_DISTRIBUTED=ON");
}
DistGroup::~DistGroup() = default;
bool DistGroup::send(const torch::Tensor&, int, int, InFlight&) { return false; }
bool DistGroup::recv(torch::Tensor&, int, int, InFlight&) { return false; }
std::shared_ptr<DistGroup::Pending> DistGroup::startSend(const torch::Tensor&, int, int) { return nullptr; }
bool DistGroup::finish(const std::shared_ptr<Pending>&, InFlight&) { return false; }
void DistGroup::abandon(const std::shared_ptr<Pending>&) {}
void DistGroup::set(const std::string&, const std::string&) {}
std::optional<std::string> DistGroup::tryGet(const std::string&) { return std::nullopt; }
bool DistGroup::has(const std::string&) { return false; }
void DistGroup::erase(const std::string&) {}
int64_t DistGroup::add(const std::string&, int64_t) { return 0; }
bool DistGroup::waitCount(const std::string&, int64_t, double, const std::atomic<bool>*) { return false; }

}  // namespace stagewise::engine::dist
