// Shape inference and costs of `model.layers` entries. Counting rules (docs/experiment-format.md,
// "Layer types"): a multiply-add is 2 FLOPs, a bias add, an activation, a residual sum and a
// dropout mask 1 per element, batch norm 4 and layer norm 5 per element, a pool one per input
// read. Activation bytes count the outputs backward keeps: those of the layers with weights, the
// norms, pools, token means and residual sums (activation functions, dropout and flatten reuse
// their neighbours' tensors and count nothing).

#include "model/layer_plan.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace stagewise::engine::detail {

namespace {

int64_t prod(const std::vector<int64_t>& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

std::string n2s(int64_t v) { return std::to_string(v); }

[[noreturn]] void fail(const std::string& field, const LayerSpec& l, const std::string& what) {
  throw SpecError(field, l.type + " " + what);
}

void needRank(const std::string& field, const LayerSpec& l, const std::vector<int64_t>& in,
              size_t rank, const std::string& what, const std::string& fix) {
  if (in.size() == rank) return;
  fail(field, l, "needs " + what + " but gets " + shapeText(in) + (fix.empty() ? "" : ": " + fix));
}

const std::string kFlattenFix = "add {\"type\": \"flatten\"} before it";

std::string joinDescriptions(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (p == "Flatten" && parts.size() > 1) continue;  // a view: not worth the room
    out += (out.empty() ? "" : " + ") + p;
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// Output side of a window of `kernel` with `stride` and `padding` over `size`; 0 when none fits.
int64_t windowOut(int64_t size, int kernel, int stride, int padding) {
  const int64_t span = size + 2 * int64_t{padding} - kernel;
  return span < 0 ? 0 : span / stride + 1;
}

LayerCost planInner(const LayerSpec& l, const std::vector<int64_t>& in, const std::string& field,
                    std::vector<std::string>& descriptions) {
  if (l.layers.empty())
    throw SpecError(field + ".layers", l.type + " needs at least one inner layer in its layers");
  LayerCost c;
  std::vector<int64_t> shape = in;
  for (size_t j = 0; j < l.layers.size(); ++j) {
    LayerCost inner = planLayer(l.layers[j], shape, field + ".layers." + std::to_string(j));
    c.params += inner.params;
    c.flops += inner.flops;
    c.activationBytes += inner.activationBytes;
    descriptions.push_back(inner.description);
    shape = inner.out;
  }
  c.out = shape;
  return c;
}

}  // namespace

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + n2s(shape[i]);
  return out + "]";
}

const std::vector<std::string>& layerTypes() {
  static const std::vector<std::string> types = {"linear",      "conv2d",      "batchnorm1d",
                                                 "batchnorm2d", "layernorm",   "relu",
                                                 "gelu",        "silu",        "tanh",
                                                 "maxpool2d",   "avgpool2d",   "adaptive_avgpool2d",
                                                 "flatten",     "dropout",     "residual",
                                                 "sequential",  "patch_embed", "transformer_block",
                                                 "token_mean",  "token_embed", "causal_block"};
  return types;
}

bool containsLayer(const std::vector<LayerSpec>& layers, std::string_view type) {
  for (const auto& l : layers)
    if (l.type == type || containsLayer(l.layers, type)) return true;
  return false;
}

std::vector<int64_t> projectionStride(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out) {
  if (in.size() != 3 || out.size() != 3) return {};
  std::vector<int64_t> stride;
  for (size_t d = 1; d < 3; ++d) {
    if (out[d] < 1 || out[d] > in[d]) return {};
    const int64_t s = (in[d] + out[d] - 1) / out[d];
    if ((in[d] - 1) / s + 1 != out[d]) return {};
    stride.push_back(s);
  }
  return stride;
}

LayerCost planLayer(const LayerSpec& l, const std::vector<int64_t>& in, const std::string& field) {
  LayerCost c;
  const int64_t n = prod(in);
  const std::string& t = l.type;
  if (t == "linear") {
    if (in.size() != 1 && in.size() != 2)
      fail(field, l,
           "needs flat inputs (or tokens [N, D]) but gets " + shapeText(in) + " (" + n2s(n) +
               " values): " + kFlattenFix);
    if (l.out < 1) throw SpecError(field + ".out", "linear needs out >= 1 (its output features)");
    const int64_t fin = in.back(), rows = n / fin, fout = l.out;
    c.out = in;
    c.out.back() = fout;
    c.params = fin * fout + (l.bias ? fout : 0);
    c.flops = rows * (2 * fin * fout + (l.bias ? fout : 0));
    c.activationBytes = rows * fout * 4;
    c.description = "Linear " + n2s(fin) + "→" + n2s(fout);
  } else if (t == "conv2d") {
    needRank(field, l, in, 3, "image inputs [C, H, W]", "");
    if (l.out < 1) throw SpecError(field + ".out", "conv2d needs out >= 1 (its output channels)");
    if (l.kernel < 1) throw SpecError(field + ".kernel", "conv2d needs kernel >= 1");
    if (l.stride < 0) throw SpecError(field + ".stride", "conv2d needs stride >= 1 (0: 1)");
    if (l.padding < 0) throw SpecError(field + ".padding", "conv2d needs padding >= 0");
    if (l.groups < 1 || in[0] % l.groups != 0 || l.out % l.groups != 0)
      throw SpecError(field + ".groups", "conv2d's groups (" + n2s(l.groups) +
                                             ") must divide its input channels (" + n2s(in[0]) +
                                             ") and its out (" + n2s(l.out) + ")");
    const int stride = l.stride == 0 ? 1 : l.stride;
    const int64_t ho = windowOut(in[1], l.kernel, stride, l.padding),
                  wo = windowOut(in[2], l.kernel, stride, l.padding);
    if (ho < 1 || wo < 1)
      fail(field, l,
           "kernel " + n2s(l.kernel) + " is larger than its padded input " + shapeText(in) +
               ": use a smaller kernel or more padding");
    const int64_t cin = in[0], cout = l.out, k2 = int64_t{l.kernel} * l.kernel;
    c.out = {cout, ho, wo};
    c.params = cout * (cin / l.groups) * k2 + (l.bias ? cout : 0);
    c.flops = 2 * (cin / l.groups) * k2 * cout * ho * wo + (l.bias ? cout * ho * wo : 0);
    c.activationBytes = cout * ho * wo * 4;
    c.description = "Conv" + n2s(l.kernel) + "x" + n2s(l.kernel) + " " + n2s(cin) + "→" +
                    n2s(cout) + (stride > 1 ? " /" + n2s(stride) : "") +
                    (l.groups > 1 ? " g" + n2s(l.groups) : "");
  } else if (t == "batchnorm1d" || t == "batchnorm2d" || t == "layernorm") {
    if (t == "batchnorm1d" && in.size() != 1 && in.size() != 2)
      fail(field, l,
           "needs features [F] or [C, L] but gets " + shapeText(in) +
               ": use batchnorm2d on images, or a flatten before it");
    if (t == "batchnorm2d")
      needRank(field, l, in, 3, "image inputs [C, H, W]", "use batchnorm1d on features");
    if (in.empty()) fail(field, l, "needs an input with at least one dimension");
    const int64_t features = t == "layernorm" ? in.back() : in[0];
    c.out = in;
    c.params = 2 * features;
    c.flops = (t == "layernorm" ? 5 : 4) * n;
    c.activationBytes = n * 4;
    c.description = t == "layernorm" ? "LayerNorm" : "BatchNorm";
  } else if (t == "relu" || t == "gelu" || t == "silu" || t == "tanh") {
    c.out = in;
    c.flops = n;
    c.description = t == "relu" ? "ReLU" : t == "gelu" ? "GELU" : t == "silu" ? "SiLU" : "Tanh";
  } else if (t == "maxpool2d" || t == "avgpool2d") {
    needRank(field, l, in, 3, "image inputs [C, H, W]", "");
    if (l.kernel < 1) throw SpecError(field + ".kernel", t + " needs kernel >= 1");
    if (l.stride < 0) throw SpecError(field + ".stride", t + " needs stride >= 1 (0: the kernel)");
    if (l.padding < 0 || 2 * l.padding > l.kernel)
      throw SpecError(field + ".padding", t + " needs padding between 0 and half its kernel (" +
                                              n2s(l.kernel / 2) + ")");
    const int stride = l.stride == 0 ? l.kernel : l.stride;
    const int64_t ho = windowOut(in[1], l.kernel, stride, l.padding),
                  wo = windowOut(in[2], l.kernel, stride, l.padding);
    if (ho < 1 || wo < 1)
      fail(field, l, "kernel " + n2s(l.kernel) + " is larger than its input " + shapeText(in));
    c.out = {in[0], ho, wo};
    c.flops = in[0] * ho * wo * l.kernel * l.kernel;
    c.activationBytes = prod(c.out) * 4;
    c.description = std::string(t == "maxpool2d" ? "MaxPool" : "AvgPool") + n2s(l.kernel) + "x" +
                    n2s(l.kernel) + (stride != l.kernel ? " /" + n2s(stride) : "");
  } else if (t == "adaptive_avgpool2d") {
    needRank(field, l, in, 3, "image inputs [C, H, W]", "");
    if (l.outputSize.size() != 2 || l.outputSize[0] < 1 || l.outputSize[1] < 1)
      throw SpecError(field + ".output_size",
                      "adaptive_avgpool2d needs output_size [H, W], both >= 1");
    c.out = {in[0], l.outputSize[0], l.outputSize[1]};
    c.flops = n;
    c.activationBytes = prod(c.out) * 4;
    c.description = l.outputSize[0] == 1 && l.outputSize[1] == 1
                        ? "AvgPool"
                        : "AvgPool→" + n2s(l.outputSize[0]) + "x" + n2s(l.outputSize[1]);
  } else if (t == "flatten") {
    c.out = {n};
    c.description = "Flatten";
  } else if (t == "dropout") {
    if (!(l.p >= 0 && l.p < 1))
      throw SpecError(field + ".p", "dropout needs p (the share of features zeroed) in [0, 1)");
    c.out = in;
    c.flops = n;
    c.description = "Dropout " + number(l.p);
  } else if (t == "token_mean") {
    needRank(field, l, in, 2, "tokens [N, D]", "");
    c.out = {in[1]};
    c.flops = n;
    c.activationBytes = in[1] * 4;
    c.description = "token mean";
  } else if (t == "patch_embed") {
    needRank(field, l, in, 3, "image inputs [C, H, W]", "");
    if (l.patch < 1 || in[1] % l.patch != 0 || in[2] % l.patch != 0)
      throw SpecError(field + ".patch", "patch_embed's patch (" + n2s(l.patch) +
                                            ") must divide the image size " + n2s(in[1]) + "x" +
                                            n2s(in[2]));
    if (l.dim < 1) throw SpecError(field + ".dim", "patch_embed needs dim >= 1 (token width)");
    const int64_t ch = in[0], p = l.patch, d = l.dim, tokens = (in[1] / p) * (in[2] / p);
    c.out = {tokens, d};
    c.params = ch * p * p * d + d + tokens * d;
    c.flops = 2 * ch * p * p * d * tokens;
    c.activationBytes = tokens * d * 4;
    c.description = "Patch " + n2s(p) + "x" + n2s(p) + " → " + n2s(tokens) + "x" + n2s(d) + " + pos";
  } else if (t == "token_embed") {
    needRank(field, l, in, 1, "token ids [T] (dataset.kind text)", "");
    if (l.dim < 1) throw SpecError(field + ".dim", "token_embed needs dim >= 1 (token width)");
    const int64_t tokens = in[0], d = l.dim;
    c.out = {tokens, d};
    c.params = kByteVocabulary * d + tokens * d;
    c.flops = tokens * d;  // the positions' sum; a lookup multiplies nothing
    c.activationBytes = tokens * d * 4;
    c.description = "Bytes → " + n2s(tokens) + "x" + n2s(d) + " + pos";
  } else if (t == "transformer_block" || t == "causal_block") {
    needRank(field, l, in, 2, "tokens [N, D]",
             t == "causal_block" ? "add a token_embed before it" : "add a patch_embed before it");
    const int64_t tokens = in[0], d = in[1];
    if (l.dim != 0 && l.dim != d)
      throw SpecError(field + ".dim", t + " expects tokens of width " + n2s(l.dim) + ", gets " +
                                          shapeText(in) + " (leave dim out to take the input's)");
    if (l.heads < 1 || d % l.heads != 0)
      throw SpecError(field + ".heads",
                      t + "'s heads (" + n2s(l.heads) + ") must divide its token width " + n2s(d));
    if (l.mlpRatio < 1 || l.mlpRatio > 16)
      throw SpecError(field + ".mlp_ratio", t + " needs mlp_ratio between 1 and 16");
    const int64_t hidden = d * l.mlpRatio;
    c.out = in;
    c.params = 2 * 2 * d + d * 3 * d + 3 * d + d * d + d + d * hidden + hidden + hidden * d + d;
    c.flops = 2 * tokens * d * 3 * d + 2 * 2 * tokens * tokens * d + 2 * tokens * d * d +
              2 * 2 * tokens * d * hidden + 10 * tokens * d;
    c.activationBytes = (6 * tokens * d + l.heads * tokens * tokens + 2 * tokens * hidden) * 4;
    // Attention counts QK^T and AV over every pair (2 * 2 * N^2 * D): the causal block masks
    // the upper triangle but computes it, as the model does.
    c.description = (t == "causal_block" ? "Causal block " : "Encoder ") + n2s(l.heads) +
                    "h, MLP " + n2s(hidden);
  } else if (t == "sequential") {
    std::vector<std::string> parts;
    c = planInner(l, in, field, parts);
    c.description = joinDescriptions(parts);
  } else if (t == "residual") {
    std::vector<std::string> parts;
    c = planInner(l, in, field, parts);
    const std::vector<int64_t> out = c.out;
    const int64_t m = prod(out);
    std::string from = n2s(in.empty() ? 0 : in[0]), to = n2s(out.empty() ? 0 : out[0]);
    std::string down;
    if (out != in) {
      if (in.size() == 3 && out.size() == 3) {
        const auto stride = projectionStride(in, out);
        if (stride.empty())
          fail(field, l,
               "turns " + shapeText(in) + " into " + shapeText(out) +
                   ": a strided 1x1 convolution cannot project the input to that size");
        // ResNet's projection: 1x1 convolution (no bias) + batch norm.
        c.params += in[0] * out[0] + 2 * out[0];
        c.flops += 2 * in[0] * m + 4 * m;
        c.activationBytes += 2 * m * 4;
        if (stride[0] > 1 || stride[1] > 1)
          down = " /" + n2s(stride[0]) + (stride[1] != stride[0] ? "x" + n2s(stride[1]) : "");
      } else if (in.size() == out.size() && (in.size() == 1 || (in.size() == 2 && in[0] == out[0]))) {
        const int64_t fin = in.back(), fout = out.back(), rows = m / fout;
        c.params += fin * fout + fout;
        c.flops += rows * (2 * fin * fout + fout);
        c.activationBytes += m * 4;
        from = n2s(fin), to = n2s(fout);
      } else {
        fail(field, l,
             "turns " + shapeText(in) + " into " + shapeText(out) +
                 ": its input cannot be added to that (a 1x1 projection changes only channels, "
                 "features or the image size); keep the inner layers' shape");
      }
    } else if (in.size() != 3) {
      from = to = n2s(in.back());
    }
    c.flops += m;  // the sum
    c.activationBytes += m * 4;
    c.description = "Residual " + from + "→" + to + down;
  } else {
    std::string known;
    for (const auto& k : layerTypes()) known += (known.empty() ? "" : ", ") + k;
    throw SpecError(field + ".type", "unknown layer type '" + t + "'; use " + known);
  }
  return c;
}

}  // namespace stagewise::engine::detail
