"""Conditions: under which parameters and launches a race exists, and the kernel's race-freedom condition."""
