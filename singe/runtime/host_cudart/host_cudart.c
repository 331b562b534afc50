/* The CUDA runtime calls of cuda_runtime.h (this folder) on the host: launches
 * are synchronous there, so synchronization only reports success. */
#include <stdlib.h>
#include <string.h>

#include "cuda_runtime.h"

cudaError_t cudaMalloc(void **pointer, size_t bytes) {
  if (pointer == NULL) return cudaErrorInvalidValue;
  *pointer = malloc(bytes ? bytes : 1);
  return *pointer ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void *pointer) {
  free(pointer);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *destination, const void *source, size_t bytes, cudaMemcpyKind kind) {
  if ((int)kind < 0 || (int)kind > 4 || (bytes && (destination == NULL || source == NULL))) return cudaErrorInvalidValue;
  memmove(destination, source, bytes);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  (void)stream;
  return cudaSuccess;
}

cudaError_t cudaGetLastError(void) { return cudaSuccess; }

const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
  }
  return "unknown error";
}
