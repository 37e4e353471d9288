#!/usr/bin/env python3
"""Run a command and succeed only if it exits with the expected code.

Usage: expect_exit.py CODE COMMAND [ARGS...]

lit's `not` accepts any non-zero exit; oomplan promises exact codes (1 error,
2 over budget), and a crash (signal) must never pass. Output is passed through
so FileCheck can read it.
"""
import subprocess
import sys

want = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:])
if proc.returncode != want:
    sys.stderr.write("expect_exit: expected exit code %d, got %d\n" % (want, proc.returncode))
    sys.exit(1)
sys.exit(0)
