#pragma once
// Declarations LibTorch 1.13's c10/cuda headers need from the CUDA runtime, for
// test_cuda_memory_stats only: it compiles the engine's memory meter against the real
// c10/cuda/CUDACachingAllocator.h with a fake caching allocator (fake_caching_allocator.cpp)
// on a machine without CUDA. Nothing here is called.
#include <cstddef>

typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef enum cudaError { cudaSuccess = 0, cudaErrorNotReady = 600 } cudaError_t;
typedef enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2
} cudaStreamCaptureStatus;
typedef enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2
} cudaStreamCaptureMode;
typedef enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyDeviceToHost = 2 } cudaMemcpyKind;
#define CUDART_VERSION 11080

inline const char* cudaGetErrorString(cudaError_t) {
  return "fake";
}
inline cudaError_t cudaGetLastError() {
  return cudaSuccess;
}
inline cudaError_t cudaStreamQuery(cudaStream_t) {
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) {
  return cudaSuccess;
}
inline cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus*) {
  return cudaSuccess;
}
inline cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode*) {
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  return cudaSuccess;
}
inline cudaError_t cudaStreamGetPriority(cudaStream_t, int*) {
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetStreamPriorityRange(int*, int*) {
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t) {
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind) {
  return cudaSuccess;
}
