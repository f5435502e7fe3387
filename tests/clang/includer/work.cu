// Included by app.cu: another kernel file first, then cells.cu.
#include "other_kernels.cu"
#include "cells.cu"
