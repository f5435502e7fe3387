/* kernelrace's <vector_types.h>: its declarations kernelrace needs are in the prelude. */
#pragma once
