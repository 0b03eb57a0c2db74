#include "probe/sample.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace stagewise::engine {

std::string generateBytes(std::vector<torch::nn::Sequential>& layers, const std::string& prompt,
                          int length, double temperature, uint64_t seed, int64_t context) {
  torch::NoGradGuard noGrad;
  std::vector<int64_t> tokens;
  for (unsigned char c : prompt.empty() ? std::string("\n") : prompt) tokens.push_back(c);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::string out;
  out.reserve(static_cast<size_t>(std::max(length, 0)));
  const torch::Device device = layers.empty() || layers.front()->parameters().empty()
                                   ? torch::Device(torch::kCPU)
                                   : layers.front()->parameters().front().device();
  for (int i = 0; i < length; ++i) {
    // The position embedding holds `context` positions: the window slides over the text.
    const int64_t n = static_cast<int64_t>(tokens.size());
    const int64_t from = std::max<int64_t>(0, n - context);
    torch::Tensor h =
        torch::from_blob(tokens.data() + from, {1, n - from}, torch::kInt64).clone().to(device);
    for (auto& layer : layers) h = layer->forward(h);
    const torch::Tensor logits = h[0][h.size(1) - 1].to(torch::kCPU, torch::kDouble);
    int64_t next = 0;
    if (temperature <= 0) {
      next = logits.argmax().item<int64_t>();
    } else {
      const torch::Tensor p = torch::softmax(logits / temperature, 0).contiguous();
      const double* probs = p.data_ptr<double>();
      const int64_t v = p.size(0);
      double u = uniform(rng), sum = 0;
      next = v - 1;  // rounding: a draw past the last sum takes the last byte
      for (int64_t k = 0; k < v; ++k)
        if ((sum += probs[k]) > u) {
          next = k;
          break;
        }
    }
    tokens.push_back(next);
    out.push_back(static_cast<char>(static_cast<unsigned char>(next)));
  }
  return out;
}

std::string generateBytes(std::vector<StageModules>& stages, const std::string& prompt, int length,
                          double temperature, uint64_t seed, int64_t context) {
  std::vector<torch::nn::Sequential> layers;
  for (auto& s : stages) {
    s.setTraining(false);  // dropout off
    layers.insert(layers.end(), s.layers.begin(), s.layers.end());
  }
  std::string out;
  try {
    out = generateBytes(layers, prompt, length, temperature, seed, context);
  } catch (...) {
    for (auto& s : stages) s.setTraining(true);
    throw;
  }
  for (auto& s : stages) s.setTraining(true);
  return out;
}

std::string validUtf8(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  const size_t n = bytes.size();
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len > 0 && i + len <= n && !(len == 2 && c < 0xC2);
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(bytes[i + k]) & 0xC0) == 0x80;
    if (ok && len == 3) {  // no overlong forms, no surrogates
      const auto c1 = static_cast<unsigned char>(bytes[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    } else if (ok && len == 4) {
      const auto c1 = static_cast<unsigned char>(bytes[i + 1]);
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90) && c <= 0xF4;
    }
    if (ok) {
      out.append(bytes, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

}  // namespace stagewise::engine
