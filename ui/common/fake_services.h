#pragma once
// Engine services backed by the fake engine (scripted numbers, no LibTorch): used by the GUI
// tests, by `stagewise --fake` for screenshots and demos, and where LibTorch is absent.

#include "common/services.h"
#include "stagewise/engine/fake_engine.h"

namespace stagewise::ui {

/// `script.steps` is used when the spec gives neither max_steps nor a dataset size to derive
/// the steps of its epochs from.
EngineServices fakeEngineServices(const engine::FakeScript& script = {});

}  // namespace stagewise::ui
