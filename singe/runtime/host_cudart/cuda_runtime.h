/* cuda_runtime.h for running a driver on the CPU: the few CUDA runtime calls
 * the examples make (memory, copies, synchronization, errors), implemented on
 * the host by host_cudart.c. "Device" memory is host memory; a kernel built
 * by singe/host.py (the emitted .cu compiled with -DSINGE_HOST) runs on it.
 * Put this folder first on the include path instead of the CUDA toolkit's. */
#ifndef SINGE_HOST_CUDART_H
#define SINGE_HOST_CUDART_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 } cudaError_t;
typedef enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
} cudaMemcpyKind;
typedef struct singe_host_stream *cudaStream_t;

cudaError_t cudaMalloc(void **pointer, size_t bytes);
cudaError_t cudaFree(void *pointer);
cudaError_t cudaMemcpy(void *destination, const void *source, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaGetLastError(void);
const char *cudaGetErrorString(cudaError_t error);

#ifdef __cplusplus
}
#endif
#endif
