#include "config/layers_json.h"

#include <algorithm>
#include <map>

#include "config/json_reader.h"
#include "model/layer_plan.h"

namespace stagewise::engine::detail {

using nlohmann::json;

namespace {

/// The keys each type takes, besides "type" and "name".
const std::map<std::string, std::vector<std::string>>& keysByType() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"linear", {"out", "bias"}},
      {"conv2d", {"out", "kernel", "stride", "padding", "groups", "bias"}},
      {"batchnorm1d", {}},
      {"batchnorm2d", {}},
      {"layernorm", {}},
      {"relu", {}},
      {"gelu", {}},
      {"silu", {}},
      {"tanh", {}},
      {"maxpool2d", {"kernel", "stride", "padding"}},
      {"avgpool2d", {"kernel", "stride", "padding"}},
      {"adaptive_avgpool2d", {"output_size"}},
      {"flatten", {}},
      {"dropout", {"p"}},
      {"residual", {"layers"}},
      {"sequential", {"layers"}},
      {"patch_embed", {"patch", "dim"}},
      {"transformer_block", {"dim", "heads", "mlp_ratio"}},
      {"token_mean", {}},
      {"token_embed", {"dim"}},
      {"causal_block", {"dim", "heads", "mlp_ratio"}},
  };
  return keys;
}

std::string typeList() {
  std::string out;
  for (const auto& t : layerTypes()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

bool takes(const std::string& type, const std::string& key) {
  const auto& keys = keysByType().at(type);
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

LayerSpec readLayer(const json& object, const std::string& path) {
  ObjectReader r(object, path);
  LayerSpec l;
  if (!r.has("type"))
    throw SpecError(path + ".type", "every layer needs a type; use " + typeList());
  r.get("type", l.type);
  if (!keysByType().count(l.type))
    throw SpecError(path + ".type", "unknown layer type '" + l.type + "'; use " + typeList());
  r.get("name", l.name);
  // A key of another type is named as such; other unknown keys get finish()'s guess.
  for (const auto& [key, value] : object.items()) {
    (void)value;
    if (key == "type" || key == "name" || takes(l.type, key)) continue;
    for (const auto& [type, keys] : keysByType())
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        const auto& own = keysByType().at(l.type);
        std::string list = "type, name";
        for (const auto& k : own) list += ", " + k;
        throw SpecError(r.field(key),
                        "a " + l.type + " layer has no " + key + "; its keys: " + list);
      }
  }
  if (takes(l.type, "out")) r.get("out", l.out);
  if (takes(l.type, "kernel")) r.get("kernel", l.kernel);
  if (takes(l.type, "stride")) r.get("stride", l.stride);
  if (takes(l.type, "padding")) r.get("padding", l.padding);
  if (takes(l.type, "groups")) r.get("groups", l.groups);
  if (takes(l.type, "bias") && r.has("bias")) {
    const json& v = object.at("bias");
    if (!v.is_boolean())
      throw SpecError(r.field("bias"), "expected true or false, found " + typeName(v));
    l.bias = v.get<bool>();
  }
  if (takes(l.type, "p")) r.get("p", l.p);
  if (takes(l.type, "output_size") && r.has("output_size")) {
    const json& v = object.at("output_size");
    if (v.is_number()) {  // one side for both, as PyTorch takes it
      int side = 0;
      r.get("output_size", side);
      l.outputSize = {side, side};
    } else {
      std::vector<int> sides;
      r.get("output_size", sides);
      l.outputSize.assign(sides.begin(), sides.end());
    }
  }
  if (takes(l.type, "patch")) r.get("patch", l.patch);
  if (takes(l.type, "dim")) r.get("dim", l.dim);
  if (takes(l.type, "heads")) r.get("heads", l.heads);
  if (takes(l.type, "mlp_ratio")) r.get("mlp_ratio", l.mlpRatio);
  if (takes(l.type, "layers") && r.has("layers"))
    l.layers = readLayers(object.at("layers"), r.field("layers"));
  r.finish();
  return l;
}

}  // namespace

std::vector<LayerSpec> readLayers(const json& list, const std::string& path) {
  if (!list.is_array())
    throw SpecError(path,
                    "expected a list of layers like [{\"type\": \"flatten\"}, "
                    "{\"type\": \"linear\", \"out\": 10}], found " +
                        typeName(list));
  std::vector<LayerSpec> out;
  for (size_t i = 0; i < list.size(); ++i)
    out.push_back(readLayer(list[i], path + "." + std::to_string(i)));
  return out;
}

json layersToJson(const std::vector<LayerSpec>& layers) {
  json out = json::array();
  const LayerSpec d;
  for (const auto& l : layers) {
    json j = {{"type", l.type}};
    if (!l.name.empty()) j["name"] = l.name;
    if (l.out != d.out) j["out"] = l.out;
    if (l.kernel != d.kernel) j["kernel"] = l.kernel;
    if (l.stride != d.stride) j["stride"] = l.stride;
    if (l.padding != d.padding) j["padding"] = l.padding;
    if (l.groups != d.groups) j["groups"] = l.groups;
    if (l.bias != d.bias) j["bias"] = l.bias;
    if (l.p != d.p) j["p"] = l.p;
    if (l.outputSize != d.outputSize) j["output_size"] = l.outputSize;
    if (l.patch != d.patch) j["patch"] = l.patch;
    if (l.dim != d.dim) j["dim"] = l.dim;
    if (l.heads != d.heads) j["heads"] = l.heads;
    if (l.mlpRatio != d.mlpRatio) j["mlp_ratio"] = l.mlpRatio;
    if (!l.layers.empty() || l.type == "residual" || l.type == "sequential")
      j["layers"] = layersToJson(l.layers);
    out.push_back(j);
  }
  return out;
}

}  // namespace stagewise::engine::detail
