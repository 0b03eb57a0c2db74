#include "optim/adam_kernel.h"

#include <cmath>

namespace stagewise::engine {

namespace {

// Debian builds for baseline x86-64 (SSE2): let the loader pick AVX2 or AVX-512 where the CPU has
// them. This file is compiled with -fno-math-errno so the square root vectorises, and with
// -ffp-contract=off so that no clone fuses multiply-adds: every CPU computes the same bits (a run
// resumed, or a rank run, on another host continues exactly).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define STAGEWISE_TARGET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STAGEWISE_TARGET_CLONES
#endif

// Without weight decay the term is left out, not multiplied by 0: an inf parameter stays inf
// (g + 0 * inf would be NaN), as in LibTorch, which skips it.
STAGEWISE_TARGET_CLONES
void update(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, int64_t n,
            float b1, float c1, float b2, float c2, float eps, float wd, float stepSize, float sbc2) {
  if (wd != 0.0f) {
    for (int64_t j = 0; j < n; ++j) {
      const float gj = g[j] + wd * p[j];
      const float mj = b1 * m[j] + c1 * gj;
      const float vj = b2 * v[j] + c2 * gj * gj;
      m[j] = mj;
      v[j] = vj;
      p[j] -= stepSize * mj / (std::sqrt(vj) / sbc2 + eps);
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      const float gj = g[j];
      const float mj = b1 * m[j] + c1 * gj;
      const float vj = b2 * v[j] + c2 * gj * gj;
      m[j] = mj;
      v[j] = vj;
      p[j] -= stepSize * mj / (std::sqrt(vj) / sbc2 + eps);
    }
  }
}

}  // namespace

void adamUpdate(float* param, const float* grad, float* expAvg, float* expAvgSq, int64_t n, const AdamScalars& s) {
  // 1 - beta in double, as LibTorch computes it (1.0f - 0.999f is 1.3e-5 away from 0.001f).
  const auto c1 = static_cast<float>(1.0 - static_cast<double>(s.beta1Double));
  const auto c2 = static_cast<float>(1.0 - static_cast<double>(s.beta2Double));
  update(param, grad, expAvg, expAvgSq, n, s.beta1, c1, s.beta2, c2, s.eps, s.weightDecay, s.stepSize,
         s.sqrtBiasCorrection2);
}

}  // namespace stagewise::engine
