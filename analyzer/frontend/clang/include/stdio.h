/* kernelrace's <stdio.h>: its declarations kernelrace needs are in the prelude. */
#pragma once
