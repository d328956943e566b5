#pragma once
// With DNNPLAN_SEPARATE_COMPILATION defined in every translation unit of a program, include this
// in exactly one of them: it defines the functions that mode leaves declared only (see
// fit/numeric_kernels.hpp). Without DNNPLAN_SEPARATE_COMPILATION they are inline everywhere and
// this header adds nothing.

#include <dnnplan/fit/numeric_kernels.hpp>

#if defined(DNNPLAN_SEPARATE_COMPILATION)
#include <dnnplan/fit/detail/numeric_kernels_impl.hpp>
#endif
