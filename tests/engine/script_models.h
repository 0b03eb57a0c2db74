#pragma once
// Test helper: TorchScript models made in C++ (torch::jit::Module::define), no Python needed.
#include <torch/script.h>

#include <cmath>
#include <string>
#include <vector>

namespace script_models {

/// A module class of its own name, with the `training` flag Python's modules have.
inline torch::jit::Module module(const std::string& cls) {
  torch::jit::Module m("__torch__." + cls);
  m.register_attribute("training", c10::BoolType::get(), true);
  return m;
}

inline torch::jit::Module linear(const std::string& cls, int64_t in, int64_t out) {
  auto m = module(cls);
  m.register_parameter("weight", torch::randn({out, in}) / std::sqrt(double(in)), false);
  m.register_parameter("bias", torch::randn({out}) * 0.1, false);
  m.define(R"(
def forward(self, x):
    return torch.matmul(x, self.weight.t()) + self.bias
)");
  return m;
}

inline torch::jit::Module relu(const std::string& cls) {
  auto m = module(cls);
  m.define(R"(
def forward(self, x):
    return torch.relu(x)
)");
  return m;
}

/// Batch norm over features, with its running statistics as buffers.
inline torch::jit::Module batchNorm(const std::string& cls, int64_t n) {
  auto m = module(cls);
  m.register_parameter("weight", torch::ones({n}), false);
  m.register_parameter("bias", torch::zeros({n}), false);
  m.register_buffer("running_mean", torch::zeros({n}));
  m.register_buffer("running_var", torch::ones({n}));
  m.define(R"(
def forward(self, x):
    return torch.batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var,
                            self.training, 0.1, 1e-5, False)
)");
  return m;
}

/// A Sequential as torch.jit.script(nn.Sequential(...)) saves it: children called in order
/// (a module defined in C++ calls a child as self.child.forward(x); the graph is the same).
/// `features` inputs, `classes` logits; `seed` draws the weights. Children: fc1 act1 fc2 norm
/// act2 fc3.
inline torch::jit::Module sequential(int64_t features, int64_t classes, uint64_t seed,
                                     int64_t width = 48) {
  torch::manual_seed(seed);
  auto top = module("Net");
  top.register_module("fc1", linear("Fc1", features, width));
  top.register_module("act1", relu("Act1"));
  top.register_module("fc2", linear("Fc2", width, width));
  top.register_module("norm", batchNorm("Norm", width));
  top.register_module("act2", relu("Act2"));
  top.register_module("fc3", linear("Fc3", width, classes));
  top.define(R"(
def forward(self, x):
    x = self.fc1.forward(x)
    x = self.act1.forward(x)
    x = self.fc2.forward(x)
    x = self.norm.forward(x)
    x = self.act2.forward(x)
    return self.fc3.forward(x)
)");
  return top;
}

/// Not a sequence: fc2 takes act's output plus fc1's (a skip connection).
inline torch::jit::Module skip(int64_t features, int64_t classes) {
  torch::manual_seed(3);
  auto top = module("Skip");
  top.register_module("fc1", linear("SFc1", features, features));
  top.register_module("act", relu("SAct"));
  top.register_module("fc2", linear("SFc2", features, classes));
  top.define(R"(
def forward(self, x):
    h = self.fc1.forward(x)
    return self.fc2.forward(self.act.forward(h) + h)
)");
  return top;
}

}  // namespace script_models
