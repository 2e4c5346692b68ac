#pragma once
// Stand-in for the compile-only check (see README.md).
typedef int cusolverStatus_t;
