"""`analyzer.tvm_hook`, the module users import to check the kernels TVM builds in their process
(`from analyzer import tvm_hook`; docs/configuration-and-ci.md): it lives in
`analyzer.tvm_checks.hook`, and this name is that module itself, so that what a user sets or
patches on it is what the hook reads."""

import sys

from analyzer.tvm_checks import hook

sys.modules[__name__] = hook
