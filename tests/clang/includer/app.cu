// The file the build compiles: the type and the tile size the kernels' file uses, then that file
// (through work.cu). cells.cu alone is no translation unit: `Cell` and `TILE` are declared here.
#include <cstdio>

#define TILE 64

struct Cell {
    float v;
    int n;
};

#include "work.cu"

int main() {
    Cell* c = nullptr;
    spread<<<4, TILE>>>(c, 256);
    std::printf("done\n");
    return 0;
}
