// cudaStream_t as cuda_runtime_api.h declares it: the kernels' ABI headers name streams without
// pulling the CUDA runtime (or libtorch) into the code that includes them.
#pragma once

typedef struct CUstream_st* cudaStream_t;
