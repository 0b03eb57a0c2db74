// model.kind "torchscript": a TorchScript file's top-level children as the layers. Read once per
// (path, modification time, size) and kept, so the designer replans instantly; qualified by
// running one dataset-shaped sample through the whole module and through its children in order.

#include "model/torchscript_model.h"

#include <nettle/sha2.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "model/plan_hooks.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/torchscript.h"

namespace stagewise::engine {

namespace {

namespace fs = std::filesystem;

/// LibTorch's messages run over several lines (and a C++ backtrace): the first line says it,
/// except for the TorchScript interpreter's, where the last "...Error: " line does.
std::string firstLine(const std::string& text) {
  std::string s = text.substr(0, text.find('\n'));
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    const size_t colon = line.find("Error: ");
    if (colon != std::string::npos && colon > 0 &&
        line.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") ==
            colon + 5)
      s = line;
    at = end + 1;
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  if (s.size() > 300) s = s.substr(0, 297) + "...";
  return s;
}

SpecError pathError(const std::string& message) { return SpecError("model.path", message); }

std::string sha256Of(const std::string& bytes) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof digest, digest);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : digest) out += {kHex[b >> 4], kHex[b & 15]};
  return out;
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// One file as read: the module, its children's names, its digest and the plans made of it.
struct ScriptModel {
  std::mutex mutex;  ///< the module is planned and cloned under it
  torch::jit::Module module;
  std::vector<std::string> names;
  std::string sha256;
  std::string source;  ///< the path, for messages
  /// (sample shape, classes) -> the layers, or the message that refused them
  std::map<std::pair<std::vector<int64_t>, int>, std::pair<std::vector<LayerInfo>, std::string>>
      plans;
};

std::shared_ptr<ScriptModel> parse(const std::string& bytes, const std::string& source) {
  auto m = std::make_shared<ScriptModel>();
  m->source = source;
  m->sha256 = sha256Of(bytes);
  const std::string fix = ": save the model with torch.jit.script(model).save(path)";
  try {
    std::istringstream in(bytes);
    m->module = torch::jit::load(in, torch::Device(torch::kCPU));
    if (!m->module.find_method("forward"))
      throw pathError(source + " has no forward method" + fix);
    for (const auto& c : m->module.named_children()) m->names.push_back(c.name);
  } catch (const SpecError&) {
    throw;
  } catch (const c10::Error& e) {
    throw pathError(source + " is not a TorchScript file this LibTorch can read (" +
                    firstLine(e.what_without_backtrace()) + ")" + fix);
  } catch (const std::exception& e) {
    throw pathError(source + " is not a TorchScript file this LibTorch can read (" +
                    firstLine(e.what()) + ")" + fix);
  }
  if (m->names.empty())
    throw pathError(source + " has no child modules: its top-level children are the layers, so "
                             "wrap the network in a torch.nn.Sequential or give it submodules");
  return m;
}

struct Stamp {
  int64_t mtime = 0;
  uintmax_t size = 0;
  bool operator==(const Stamp& o) const { return mtime == o.mtime && size == o.size; }
};

std::mutex g_cacheMutex;
std::map<std::string, std::pair<Stamp, std::shared_ptr<ScriptModel>>> g_cache;

/// The file at `path`, read again only when its modification time or size changed.
std::shared_ptr<ScriptModel> modelAt(const std::string& path) {
  std::error_code ec;
  Stamp stamp;
  stamp.size = fs::file_size(path, ec);
  if (!ec) stamp.mtime = fs::last_write_time(path, ec).time_since_epoch().count();
  if (ec)
    throw pathError("cannot read the TorchScript file " + path + " (" + ec.message() +
                    "): check model.path");
  {
    std::lock_guard lock(g_cacheMutex);
    auto it = g_cache.find(path);
    if (it != g_cache.end() && it->second.first == stamp) return it->second.second;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) throw pathError("cannot read the TorchScript file " + path + ": check its permissions");
  auto model = parse(bytes.str(), path);
  std::lock_guard lock(g_cacheMutex);
  if (g_cache.size() >= 8 && !g_cache.count(path)) g_cache.erase(g_cache.begin());
  g_cache[path] = {stamp, model};
  return model;
}

/// Where the forward graph stops calling the children one after another on the previous one's
/// output: the child's index and why (-1: the graph is such a chain, or cannot be read).
std::pair<int, std::string> firstOffChain(const torch::jit::Module& module,
                                          const std::vector<std::string>& names) {
  using namespace torch::jit;
  try {
    const std::shared_ptr<Graph> g = module.get_method("forward").graph();
    if (g->inputs().size() != 2) return {0, "forward takes more than one input"};
    Value* self = g->inputs()[0];
    Value* expected = g->inputs()[1];
    size_t next = 0;
    for (Node* n : g->nodes()) {
      if (n->kind() != prim::CallMethod || n->inputs().empty()) continue;
      Node* get = n->inputs()[0]->node();
      if (get->kind() != prim::GetAttr || get->inputs()[0] != self) continue;
      const std::string called = get->s(attr::name);
      if (next >= names.size())
        return {static_cast<int>(names.size()) - 1, "forward calls '" + called + "' after it"};
      if (called != names[next])
        return {static_cast<int>(next), "forward calls '" + called + "' in its place"};
      if (n->inputs().size() != 2 || n->inputs()[1] != expected)
        return {static_cast<int>(next),
                next == 0 ? "forward does not give it the model's input as it is"
                          : "forward does not give it the output of '" + names[next - 1] +
                                "' as it is"};
      expected = n->output();
      ++next;
    }
    if (next < names.size()) return {static_cast<int>(next), "forward does not call it in order"};
    if (g->outputs().size() != 1 || g->outputs()[0] != expected)
      return {static_cast<int>(names.size()) - 1, "forward does not return its output as it is"};
  } catch (const std::exception&) {
  }
  return {-1, ""};
}

/// FLOPs per sample, estimated: every Linear- or convolution-shaped weight (2-D: a Linear, once
/// per row of the output; 3-D or more: a convolution, once per output position), plus one per
/// output element for the rest (activations, norms, pools).
int64_t estimateFlops(const torch::jit::Module& child, const std::vector<int64_t>& out) {
  const int64_t outNumel = numel(out);
  int64_t flops = outNumel;
  for (const auto& sub : child.modules())
    for (const auto& p : sub.named_parameters(/*recurse=*/false)) {
      if (p.name != "weight") continue;
      const torch::Tensor& w = p.value;
      if (w.dim() == 2) {
        const int64_t rows = out.size() == 2 ? out[0] : 1;  // tokens x features
        flops += 2 * w.numel() * rows;
      } else if (w.dim() >= 3) {
        const size_t spatial = static_cast<size_t>(w.dim() - 2);
        int64_t positions = 1;
        if (out.size() == spatial + 1)
          for (size_t i = 1; i < out.size(); ++i) positions *= out[i];
        flops += 2 * w.numel() * positions;
      }
    }
  return flops;
}

/// Module::train asserts that every submodule has a `training` attribute; a module made without
/// Python may have none, so only the modules that have one are set.
void setTraining(const torch::jit::Module& module, bool on) {
  for (auto m : module.modules())
    if (m.hasattr("training")) m.setattr("training", on);
}

bool isTraining(const torch::jit::Module& module) {
  return !module.hasattr("training") || module.attr("training").toBool();
}

std::string typeName(const torch::jit::Module& m) {
  const auto name = m.type()->name();
  return name ? name->name() : std::string("Module");
}

/// Runs a sample through the whole module and through the children in order; the layers when
/// they agree. Call under the model's mutex.
std::vector<LayerInfo> qualify(ScriptModel& m, const InputShape& input) {
  torch::NoGradGuard noGrad;
  torch::jit::GraphOptimizerEnabledGuard plain(false);  // as the layers run (ScriptLayerImpl)
  const std::string& src = m.source;
  torch::jit::Module work = m.module.clone();
  setTraining(work, false);  // dropout off, batch norm on its running statistics
  std::vector<int64_t> shape{2};
  shape.insert(shape.end(), input.dims.begin(), input.dims.end());
  auto gen = at::detail::createCPUGenerator(0x5eed);
  const torch::Tensor x = torch::randn(shape, gen, torch::kFloat);
  torch::Tensor whole;
  try {
    const c10::IValue out = work.forward({x});
    if (!out.isTensor())
      throw pathError(src + ": forward returns a " + out.tagKind() +
                      ", not a tensor of logits; the model must return one tensor");
    whole = out.toTensor();
  } catch (const SpecError&) {
    throw;
  } catch (const std::exception& e) {  // c10::Error, or the interpreter's runtime_error
    // Which child fails, when they fail in order too.
    std::string where;
    torch::Tensor y = x;
    for (const auto& c : work.named_children()) try {
        y = torch::jit::Module(c.value).forward({y}).toTensor();
      } catch (const std::exception&) {
        where = " at child '" + c.name + "'";
        break;
      }
    throw pathError(src + ": forward fails on a dataset sample of shape " +
                    shapeText(input.dims) + where + " (" + firstLine(e.what()) +
                    "): the model must take the dataset's samples");
  }
  std::vector<LayerInfo> layers;
  torch::Tensor y = x;
  int index = 0;
  for (const auto& c : work.named_children()) {
    torch::jit::Module child = c.value;
    const std::string at = "child " + std::to_string(index) + " '" + c.name + "'";
    try {
      const c10::IValue out = child.forward({y});
      if (!out.isTensor())
        throw pathError(src + ": " + at + " returns a " + out.tagKind() +
                        ", not a tensor: every top-level child must return one tensor");
      y = out.toTensor();
    } catch (const SpecError&) {
      throw;
    } catch (const std::exception& e) {
      throw pathError(src + ": calling its children in order does not reproduce its forward: " +
                      at + " cannot take " +
                      (index == 0 ? std::string("the model's input")
                                  : "the output of '" + layers.back().name + "'") +
                      " (" + firstLine(e.what()) + ")");
    }
    if (y.dim() < 1 || y.size(0) != 2)
      throw pathError(src + ": " + at + " changes the batch dimension: its output must keep one "
                                        "row per sample");
    LayerInfo l;
    l.index = index;
    l.name = c.name;
    l.outShape = std::vector<int64_t>(y.sizes().begin() + 1, y.sizes().end());
    for (const auto& p : child.parameters()) l.params += p.numel();
    l.flops = estimateFlops(child, l.outShape);
    l.activationBytes = numel(l.outShape) * 4;
    std::string dims;
    for (size_t i = 0; i < l.outShape.size(); ++i)
      dims += (i ? "×" : "") + std::to_string(l.outShape[i]);
    l.description = typeName(child) + " → " + dims;
    layers.push_back(std::move(l));
    ++index;
  }
  const bool sameShape = y.sizes() == whole.sizes();
  if (!sameShape || !torch::allclose(y.to(torch::kDouble), whole.to(torch::kDouble), 1e-4, 1e-5)) {
    auto [bad, why] = firstOffChain(work, m.names);
    if (bad < 0) bad = static_cast<int>(m.names.size()) - 1, why = "the values differ";
    const std::vector<int64_t> wholeShape(whole.sizes().begin() + std::min<int64_t>(1, whole.dim()),
                                          whole.sizes().end());
    throw pathError(
        src + ": calling its children in order does not reproduce its forward (" +
        (sameShape ? std::string("other values")
                   : "shape " + shapeText(layers.back().outShape) + " instead of " +
                         shapeText(wholeShape)) +
        "), first at child " + std::to_string(bad) + " '" + m.names[static_cast<size_t>(bad)] +
        "' (" + why + "): only a model whose forward calls each top-level child on the output of "
                      "the one before can be cut into stages");
  }
  const auto& last = layers.back();
  if (last.outShape != std::vector<int64_t>{input.numClasses})
    throw pathError(src + ": its last child '" + last.name + "' gives " +
                    shapeText(last.outShape) + " per sample, but the dataset has " +
                    std::to_string(input.numClasses) + " classes: the model must end in " +
                    std::to_string(input.numClasses) + " logits");
  return layers;
}

void planFrom(ScriptModel& m, ModelPlan& plan) {
  std::lock_guard lock(m.mutex);
  const auto key = std::make_pair(plan.input.dims, plan.input.numClasses);
  auto it = m.plans.find(key);
  if (it == m.plans.end()) {
    std::pair<std::vector<LayerInfo>, std::string> result;
    try {
      result.first = qualify(m, plan.input);
    } catch (const SpecError& e) {
      result.second = e.message();
    }
    it = m.plans.emplace(key, std::move(result)).first;
  }
  if (!it->second.second.empty()) throw pathError(it->second.second);
  plan.layers = it->second.first;
}

void planPath(const ModelSpec& model, ModelPlan& plan) {
  if (model.path.empty())
    throw pathError("a torchscript model needs the file: set model.path to a file saved with "
                    "torch.jit.script(model).save(path)");
  planFrom(*modelAt(model.path), plan);
}

/// Installed while the engine is linked: planModel asks it for model.kind "torchscript".
[[maybe_unused]] const bool g_installed = (detail::setTorchScriptPlanner(&planPath), true);

/// One child as a layer: its parameters and buffers registered as this module's (the same
/// tensors, so an optimiser's step, a checkpoint's restore or a state copy reaches the child).
class ScriptLayerImpl : public torch::nn::Module {
 public:
  explicit ScriptLayerImpl(torch::jit::Module child) : m_child(std::move(child)) {
    auto flat = [](std::string name) {
      for (char& ch : name)
        if (ch == '.') ch = '_';
      return name;
    };
    for (const auto& p : m_child.named_parameters(/*recurse=*/true)) {
      register_parameter(flat(p.name), p.value, /*requires_grad=*/true);
      if (!p.value.is_leaf())
        throw std::runtime_error("TorchScript parameter " + p.name + " is not a leaf tensor");
    }
    for (const auto& b : m_child.named_buffers(/*recurse=*/true)) register_buffer(flat(b.name), b.value);
    torch::nn::Module::train(isTraining(m_child));
  }
  torch::Tensor forward(torch::Tensor x) {
    // The graph executor's optimised plan (after two profiling runs) differentiates with its own
    // formulas, so the first steps of a run and the rest would compute gradients differently, and
    // a resumed run would not continue exactly: always the plain graph, LibTorch's own autograd.
    torch::jit::GraphOptimizerEnabledGuard plain(false);
    return m_child.forward({std::move(x)}).toTensor();
  }
  void train(bool on) override {
    torch::nn::Module::train(on);
    setTraining(m_child, on);
  }

 private:
  torch::jit::Module m_child;
};
TORCH_MODULE(ScriptLayer);

/// model.reinit: new weights for every parameter of `child`, drawn from the generator (seeded
/// for the layer just before). Weights of two or more dimensions (Linear, convolutions) as
/// PyTorch initialises them (Kaiming-uniform, a = sqrt 5; biases uniform in ±1/sqrt(fan-in)),
/// or as model.init says; one-dimensional weights (norms) 1; other parameters (embeddings)
/// normal with std 0.02; batch-norm statistics reset.
void redraw(const torch::jit::Module& child, const std::string& init) {
  namespace ini = torch::nn::init;
  torch::NoGradGuard noGrad;
  for (const auto& sub : child.modules()) {
    torch::Tensor weight, bias;
    std::vector<torch::Tensor> others;
    for (const auto& p : sub.named_parameters(/*recurse=*/false)) {
      if (p.name == "weight") weight = p.value;
      else if (p.name == "bias") bias = p.value;
      else others.push_back(p.value);
    }
    int64_t fanIn = 0;
    if (weight.defined() && weight.dim() >= 2) {
      fanIn = weight.numel() / weight.size(0);
      if (init == "kaiming") ini::kaiming_normal_(weight, 0.0, torch::kFanIn, torch::kReLU);
      else if (init == "xavier") ini::xavier_uniform_(weight);
      else ini::kaiming_uniform_(weight, std::sqrt(5.0));
    } else if (weight.defined()) {
      weight.fill_(1.0);
    }
    if (bias.defined()) {
      if (fanIn > 0 && init == "default")
        bias.uniform_(-1.0 / std::sqrt(double(fanIn)), 1.0 / std::sqrt(double(fanIn)));
      else
        bias.zero_();
    }
    for (auto& t : others) {
      if (t.dim() >= 2) t.normal_(0.0, 0.02);
      else t.zero_();
    }
    for (const auto& b : sub.named_buffers(/*recurse=*/false)) {
      if (b.name == "running_var") b.value.fill_(1);
      else if (b.name == "running_mean" || b.name == "num_batches_tracked") b.value.zero_();
    }
  }
}

/// Each top-level child of `top` with its state: parameters, then buffers (stateOf's order).
std::vector<std::vector<torch::Tensor>> childStates(const torch::jit::Module& top) {
  std::vector<std::vector<torch::Tensor>> params, buffers;
  for (const auto& c : top.named_children()) {
    std::vector<torch::Tensor> p, b;
    for (const auto& t : c.value.parameters()) p.push_back(t);
    for (const auto& t : c.value.buffers()) b.push_back(t);
    params.push_back(std::move(p));
    buffers.push_back(std::move(b));
  }
  for (size_t i = 0; i < params.size(); ++i)
    params[i].insert(params[i].end(), buffers[i].begin(), buffers[i].end());
  return params;
}

}  // namespace

std::vector<torch::nn::Sequential> buildTorchScriptLayers(const ModelSpec& spec,
                                                          const ModelPlan& plan, uint64_t seed) {
  const auto model = modelAt(spec.path);
  torch::jit::Module copy;
  {
    std::lock_guard lock(model->mutex);
    torch::NoGradGuard noGrad;  // the copies are leaves, as the file's parameters are
    copy = model->module.clone();
  }
  const auto children = copy.named_children();
  if (children.size() != plan.layers.size())
    throw pathError(spec.path + " changed while the run was set up: it has " +
                    std::to_string(children.size()) + " children, the plan " +
                    std::to_string(plan.layers.size()));
  std::vector<torch::nn::Sequential> layers;
  size_t i = 0;
  for (const auto& c : children) {
    // As buildLayers seeds the families: layer i's draw depends on (seed, i) alone.
    torch::manual_seed(seed * 1000003ull + i);
    if (spec.reinit) redraw(c.value, spec.init);
    torch::nn::Sequential layer;
    layer->push_back(ScriptLayer(c.value));
    layers.push_back(layer);
    ++i;
  }
  return layers;
}

std::string torchScriptSha256(const std::string& path) { return modelAt(path)->sha256; }

ModelPlan planTorchScriptBytes(const std::string& bytes, const InputShape& input) {
  ModelPlan plan;
  plan.input = input;
  auto model = parse(bytes, "the file");
  planFrom(*model, plan);
  return plan;
}

void exportTorchScript(const std::string& checkpoint, const std::string& outPath) {
  const CheckpointInfo info = readCheckpointInfo(checkpoint);
  const ModelSpec& spec = info.spec.model;
  if (spec.kind != "torchscript")
    throw std::runtime_error(info.path + " is a checkpoint of a " + spec.kind +
                             " model: only a torchscript run's network can be written back as "
                             "TorchScript");
  const auto model = modelAt(spec.path);
  torch::jit::Module top;
  {
    std::lock_guard lock(model->mutex);
    torch::NoGradGuard noGrad;
    top = model->module.clone();
  }
  const auto states = childStates(top);
  torch::NoGradGuard noGrad;
  size_t layer = 0;
  for (int k = 0; k < info.stages; ++k) {
    const std::string file = (fs::path(info.path) / ("stage-" + std::to_string(k) + ".pt")).string();
    torch::serialize::InputArchive archive;
    std::vector<torch::Tensor> saved;
    try {
      archive.load_from(file, torch::Device(torch::kCPU));
      while (true) {
        torch::Tensor t;  // a fresh one each time: try_read writes into a defined tensor
        if (!archive.try_read("body." + std::to_string(saved.size()), t)) break;
        saved.push_back(t);
      }
    } catch (const c10::Error& e) {
      throw std::runtime_error(file + ": cannot read the stage's weights (" +
                               firstLine(e.what_without_backtrace()) + ")");
    }
    // The stage's layers: as many children as its tensors fill (parameters of each, then
    // buffers of each). A child with no state belongs to either side of a cut alike.
    size_t count = 0, first = layer;
    while (layer < states.size() && count + states[layer].size() <= saved.size() &&
           (count < saved.size() || states[layer].empty()))
      count += states[layer++].size();
    if (k + 1 == info.stages)
      while (layer < states.size() && states[layer].empty()) ++layer;
    if (count != saved.size())
      throw std::runtime_error(file + " holds " + std::to_string(saved.size()) +
                               " tensors that do not fit the children of " + spec.path +
                               ": the file has changed since the run");
    size_t next = 0;
    auto restore = [&](const torch::Tensor& target) {
      const torch::Tensor& from = saved[next++];
      if (from.sizes() != target.sizes())
        throw std::runtime_error(file + ": a tensor of shape " + shapeText(from.sizes().vec()) +
                                 " where " + spec.path + " has " +
                                 shapeText(target.sizes().vec()) + ": the file has changed");
      target.copy_(from);
    };
    // stateOf's order over the stage: every layer's parameters, then every layer's buffers.
    std::vector<torch::Tensor> params, buffers;
    size_t l = 0;
    for (const auto& c : top.named_children()) {
      if (l >= first && l < layer) {
        for (const auto& t : c.value.parameters()) params.push_back(t);
        for (const auto& t : c.value.buffers()) buffers.push_back(t);
      }
      ++l;
    }
    for (const auto& t : params) restore(t);
    for (const auto& t : buffers) restore(t);
  }
  if (layer != states.size())
    throw std::runtime_error(info.path + " holds the weights of " + std::to_string(layer) +
                             " of the " + std::to_string(states.size()) + " children of " +
                             spec.path + ": the file has changed since the run");
  try {
    top.save(outPath);
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot write " + outPath + " (" +
                             firstLine(e.what_without_backtrace()) + ")");
  }
}

}  // namespace stagewise::engine
