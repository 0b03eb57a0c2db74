#pragma once
// Shapes and costs of one `model.layers` entry (torch-free): the one place that knows what each
// layer type does to a sample's shape, so the plan and the LibTorch builder agree.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stagewise/engine/spec.h"

namespace stagewise::engine::detail {

/// Byte tokens: token_embed's vocabulary (dataset.kind "text").
constexpr int64_t kByteVocabulary = 256;

/// What one layer (with its inner layers) does to a sample of shape `in`.
struct LayerCost {
  std::vector<int64_t> out;     ///< output shape per sample
  int64_t params = 0;
  int64_t flops = 0;            ///< forward FLOPs per sample (multiply-add = 2)
  int64_t activationBytes = 0;  ///< float32 bytes of the outputs backward keeps, per sample
  std::string description;      ///< "Conv3x3 1→32 + BatchNorm + ReLU"
};

/// The layer's output shape and costs on inputs of shape `in`. `field` names the layer
/// ("model.layers.5"); a bad value or a shape the layer cannot take throws SpecError naming it
/// (or its key, "model.layers.5.kernel"), the type and the shapes.
LayerCost planLayer(const LayerSpec& layer, const std::vector<int64_t>& in,
                    const std::string& field);

/// A residual's 1x1 projection stride from [C, H, W] to [C', H', W'] (H' = (H - 1) / s + 1).
/// Empty when no stride gives the output size.
std::vector<int64_t> projectionStride(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out);

/// Whether `type` occurs in `layers` (inner layers included).
bool containsLayer(const std::vector<LayerSpec>& layers, std::string_view type);

/// "[1, 28, 28]"
std::string shapeText(const std::vector<int64_t>& shape);

/// The layer types `model.layers` knows, in the documented order.
const std::vector<std::string>& layerTypes();

}  // namespace stagewise::engine::detail
