#pragma once
// The model as an ordered list of layers with their costs, computed without LibTorch so the
// designer, `inspect` and the partition estimate can show it instantly.

#include <cstdint>
#include <string>
#include <vector>

#include "stagewise/engine/spec.h"

namespace stagewise::engine {

/// Shape of one sample and the number of classes, read from the dataset headers.
struct InputShape {
  std::vector<int64_t> dims;  ///< e.g. {1, 28, 28} or {32}
  int numClasses = 10;
  /// Text (dataset.kind "text"): a sample is `dims[0]` token ids (int64, a vocabulary of
  /// numClasses) and its labels are the next token at every position, [dims[0]]; the model's
  /// output is [dims[0], numClasses].
  bool sequence = false;
  int64_t numel() const;
};

/// One cuttable layer (an entry of familyLayers: for the MLP Linear + activation; the classifier
/// is the last layer).
struct LayerInfo {
  int index = 0;
  std::string name;               ///< "fc3", "classifier"
  std::string description;        ///< "Linear 512→512 + ReLU"
  std::vector<int64_t> outShape;  ///< per sample
  int64_t params = 0;
  int64_t flops = 0;            ///< forward FLOPs per sample (multiply-add = 2)
  int64_t activationBytes = 0;  ///< output activation bytes per sample (float32)
};

struct ModelPlan {
  InputShape input;
  std::vector<LayerInfo> layers;
  int64_t totalParams() const;
  int64_t totalFlops() const;
  int64_t inputBytes() const;  ///< bytes of one input sample (float32)
};

/// Builds the layer list for `model` on inputs of `input`: the shapes, costs, names and
/// descriptions of the entries of familyLayers(model, input). Throws SpecError on bad model
/// fields, naming a layer that cannot take its input by index and type with the shapes
/// ("model.layers.5: linear needs flat inputs ... but gets [32, 7, 7]").
ModelPlan planModel(const ModelSpec& model, const InputShape& input);

/// The network as `model.layers` entries, one per cuttable layer: `model.layers` itself for kind
/// "layers"; the mlp, cnn and vit families expanded (fc1.., stem, block1.1.., patch_embed,
/// encoder1.., classifier; gpt: token_embed, block1.., lm_head). A family and its expansion as a
/// "layers" model are the same network, with the same initial weights for a seed. Throws SpecError
/// on bad family fields.
std::vector<LayerSpec> familyLayers(const ModelSpec& model, const InputShape& input);

/// Parameters and forward FLOPs per sample of an aux head fed by `inShape`.
struct AuxCost {
  int64_t params = 0;
  int64_t flops = 0;
};
AuxCost auxHeadCost(const std::string& kind, int hidden, const std::vector<int64_t>& inShape,
                    int numClasses);

}  // namespace stagewise::engine
