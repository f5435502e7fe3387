"""Between blocks: races of threads of different blocks, and the threadfence-and-ticket last-block pattern."""
