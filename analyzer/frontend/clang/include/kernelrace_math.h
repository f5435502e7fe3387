/* kernelrace's <cmath>: the math functions and constants device code uses (values the analysis
   does not interpret: each is an uninterpreted function of its arguments). */
#pragma once
#ifndef __KR_FN
#if defined(__CUDA__)
#define __KR_FN __host__ __device__
#else
#define __KR_FN
#endif
#endif
__KR_FN float sqrtf(float);
__KR_FN float rsqrtf(float);
__KR_FN float expf(float);
__KR_FN float exp2f(float);
__KR_FN float exp10f(float);
__KR_FN float expm1f(float);
__KR_FN float logf(float);
__KR_FN float log2f(float);
__KR_FN float log10f(float);
__KR_FN float log1pf(float);
__KR_FN float sinf(float);
__KR_FN float cosf(float);
__KR_FN float tanf(float);
__KR_FN float asinf(float);
__KR_FN float acosf(float);
__KR_FN float atanf(float);
__KR_FN float sinhf(float);
__KR_FN float coshf(float);
__KR_FN float tanhf(float);
__KR_FN float fabsf(float);
__KR_FN float floorf(float);
__KR_FN float ceilf(float);
__KR_FN float truncf(float);
__KR_FN float roundf(float);
__KR_FN float rintf(float);
__KR_FN float cbrtf(float);
__KR_FN float erff(float);
__KR_FN float erfcf(float);
__KR_FN float lgammaf(float);
__KR_FN float tgammaf(float);
__KR_FN float powf(float, float);
__KR_FN float fmaxf(float, float);
__KR_FN float fminf(float, float);
__KR_FN float fmodf(float, float);
__KR_FN float atan2f(float, float);
__KR_FN float hypotf(float, float);
__KR_FN float copysignf(float, float);
__KR_FN float fdimf(float, float);
__KR_FN float remainderf(float, float);
__KR_FN float fmaf(float, float, float);
__KR_FN double acos(double);
__KR_FN double asin(double);
__KR_FN double atan(double);
__KR_FN double cbrt(double);
__KR_FN double ceil(double);
__KR_FN double cos(double);
__KR_FN double cosh(double);
__KR_FN double erf(double);
__KR_FN double erfc(double);
__KR_FN double exp(double);
__KR_FN double exp10(double);
__KR_FN double exp2(double);
__KR_FN double expm1(double);
__KR_FN double fabs(double);
__KR_FN double floor(double);
__KR_FN double lgamma(double);
__KR_FN double log(double);
__KR_FN double log10(double);
__KR_FN double log1p(double);
__KR_FN double log2(double);
__KR_FN double rint(double);
__KR_FN double round(double);
__KR_FN double rsqrt(double);
__KR_FN double sin(double);
__KR_FN double sinh(double);
__KR_FN double sqrt(double);
__KR_FN double tan(double);
__KR_FN double tanh(double);
__KR_FN double tgamma(double);
__KR_FN double trunc(double);
__KR_FN double pow(double, double);
__KR_FN double fmax(double, double);
__KR_FN double fmin(double, double);
__KR_FN double fmod(double, double);
__KR_FN double atan2(double, double);
__KR_FN double hypot(double, double);
__KR_FN double copysign(double, double);
__KR_FN double fdim(double, double);
__KR_FN double remainder(double, double);
__KR_FN double fma(double, double, double);
__KR_FN int abs(int);
__KR_FN long long llabs(long long);
__KR_FN int isnan(float);
__KR_FN int isinf(float);
__KR_FN int isfinite(float);
#ifndef INFINITY
#define INFINITY __builtin_huge_valf()
#endif
#ifndef NAN
#define NAN __builtin_nanf("")
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __builtin_huge_valf()
#endif
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.40282347e+38F
#define FLT_MIN 1.17549435e-38F
#define FLT_EPSILON 1.19209290e-7F
#endif
#include "climits"
