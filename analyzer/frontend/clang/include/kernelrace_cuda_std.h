/* libcu++'s cuda::std: the C++ library's names under it (what kernels use of it are types and
   constants: numeric_limits, is_same, enable_if, array). */
#pragma once
namespace std {}
namespace cuda { namespace std { using namespace ::std; } }
