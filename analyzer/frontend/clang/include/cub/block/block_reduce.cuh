/* kernelrace: see <cub/cub.cuh>. */
#pragma once
#include <cub/cub.cuh>
