#pragma once
// Stand-in for the compile-only check (see README.md).
#include "cusolver_common.h"
typedef struct cusolverDnContext* cusolverDnHandle_t;
