#pragma once
// Precompiled header of stagewise_engine: <torch/torch.h> costs 15-20 s per translation unit.
#include <torch/torch.h>

#include <ATen/Parallel.h>
