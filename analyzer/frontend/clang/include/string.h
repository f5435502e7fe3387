/* kernelrace's <string.h>: declarations for host code (kernelrace_libc.h). */
#pragma once
#include "kernelrace_libc.h"
