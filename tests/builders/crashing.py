"""A builder whose process dies on purpose (test data for crash isolation, analyzer/command/parallel.py).

`tiles(crash=1)` kills its own process with SIGSEGV, as TVM's code generators sometimes do;
`tiles(crash=0)` is `grid_races.tiles()`, a clean kernel.
"""

import os
import signal

from builders.grid_races import tiles as clean_tiles


def tiles(crash: int = 0, target=None):
    if crash:
        os.kill(os.getpid(), signal.SIGSEGV)
    return clean_tiles(0, target)
