#pragma once
// Stand-in for the compile-only check (see README.md).
typedef struct cusparseContext* cusparseHandle_t;
typedef int cusparseStatus_t;
const char* cusparseGetErrorString(cusparseStatus_t status);
