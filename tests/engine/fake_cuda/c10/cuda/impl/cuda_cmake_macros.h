#pragma once
// Empty: see ../../../cuda_runtime_api.h.
