#include "edgewise/gnn/train/loss_guard.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

NonFiniteLoss parse_nonfinite_loss(const std::string& name) {
  if (name == "error") return NonFiniteLoss::Error;
  if (name == "warn") return NonFiniteLoss::Warn;
  detail::throw_invalid_argument("nonfinite_loss: unknown '", name, "' (expected error or warn)");
}

namespace train_detail {

void LossGuard::check(double loss, int64_t epoch, int64_t batch) {
  if (std::isfinite(loss)) return;
  const char* value = std::isnan(loss) ? "NaN" : loss > 0 ? "+inf" : "-inf";
  std::ostringstream where;
  where << "epoch " << epoch;
  if (batch >= 0) where << ", batch " << batch + 1;
  if (policy_ == NonFiniteLoss::Error) {
    std::ostringstream message;
    message << trainer_ << ": the training loss is " << value << " at " << where.str()
            << ": training diverged (learning rate too high?) or the input holds non-finite values; stopped before "
               "this step's update (nonfinite_loss = warn goes on instead)";
    throw NonFiniteLossError(message.str(), epoch, loss);
  }
  if (!warned_) {
    std::fprintf(stderr, "%s: warning: the training loss is %s at %s (training goes on; later ones are not reported)\n",
                 trainer_, value, where.str().c_str());
    warned_ = true;
  }
}

}  // namespace train_detail
}  // namespace edgewise::gnn
