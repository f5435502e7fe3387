// A launch macro in a header of the user's (the kernel's file only names it).
#define LAUNCH_ROWS(kernel, rows, ...) kernel<<<rows, 64>>>(__VA_ARGS__)
#define LAUNCH_WIDE(kernel, ...) kernel<<<1, 128>>>(__VA_ARGS__)
