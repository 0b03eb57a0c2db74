#pragma once
// One fused pass of Adam over a contiguous float32 range (LibTorch-free, so this file gets its own
// compiler flags; see fused_adam.h for why it exists).

#include <cstdint>

namespace stagewise::engine {

struct AdamScalars {
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  double beta1Double = 0.9;  ///< for 1 - beta1, computed in double as LibTorch does
  double beta2Double = 0.999;
  float eps = 1e-8f;
  float weightDecay = 0.0f;    ///< L2 added to the gradient (torch::optim::Adam's meaning)
  float stepSize = 1e-3f;      ///< lr / (1 - beta1^t)
  float sqrtBiasCorrection2 = 1.0f;  ///< sqrt(1 - beta2^t)
};

/// For j in [0, n): g = grad + wd*param; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;
/// param -= stepSize * m / (sqrt(v)/sqrt(bc2) + eps). Reads four streams and writes three once,
/// where LibTorch's Adam makes about eight passes and allocates two temporaries per tensor.
void adamUpdate(float* param, const float* grad, float* expAvg, float* expAvgSq, int64_t n, const AdamScalars& s);

}  // namespace stagewise::engine
