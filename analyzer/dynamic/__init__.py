"""Running a kernel's IR on concrete values: the dynamic side of kernelrace.

`interpreter.py` runs the threads of a block one at a time between barriers, on inputs drawn from a
seed (`values.py` gives every dtype its arithmetic, fp16/bf16 rounding included); `schedule.py`
chooses the order the threads run in; `detector.py` records every access with its thread and
barrier interval and reports the pairs that race. Reads the IR only, so it runs every dialect.
"""
