#pragma once
// Stand-in for the compile-only check (see README.md): what a CUDA build of libtorch generates.
#define C10_CUDA_BUILD_MAIN_LIB
