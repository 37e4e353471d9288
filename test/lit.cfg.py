# lit configuration: .onnxtxt models carry their own RUN and CHECK lines
# (the ONNX text parser skips '#' lines), plus .test files for CLI behaviour.
import os
import lit.formats

config.name = "oomplan"
# --param tools_dir=DIR runs the suite on another build's tools (CI runs
# the runtime's tests on the sanitizer build's oomplan-run: utils/test.sh).
config.oomplan_tools_dir = lit_config.params.get("tools_dir",
                                                 config.oomplan_tools_dir)
config.oomplan_cuda = lit_config.params.get("cuda", config.oomplan_cuda)
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".onnxtxt", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.join(config.oomplan_source_root, "test", "lit")
config.test_exec_root = os.path.join(config.oomplan_obj_root, "lit")

# cuda-build: the CUDA backend is built; cuda-device: a GPU is visible too
# (nvidia-smi lists one), so its tests run instead of being skipped.
if config.oomplan_cuda in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("cuda-build")
    import subprocess
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                          timeout=30).returncode == 0:
            config.available_features.add("cuda-device")
    except (OSError, subprocess.TimeoutExpired):
        pass

llvm_bin = "/usr/lib/llvm-14/bin"
config.environment["PATH"] = os.pathsep.join(
    [llvm_bin, os.path.join(config.oomplan_tools_dir, "oomplan"),
     os.path.join(config.oomplan_tools_dir, "oomplan-bench"),
     config.environment.get("PATH", "/usr/bin:/bin")])
# ASan builds: a leak or error must fail the test, not just print, and
# with an exit code of its own: a report exiting 1 would pass for the exit 1
# of bad input in every `%expect_exit 1` test.
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:exitcode=86"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:exitcode=86"
# Before "%oomplan", which would otherwise match the start of "%oomplan-run"
# (error tests in other folders run both tools).
config.substitutions.append(("%oomplan-run", os.path.join(config.oomplan_tools_dir, "oomplan-run", "oomplan-run")))
config.substitutions.append(("%oomplan", os.path.join(config.oomplan_tools_dir, "oomplan", "oomplan")))
config.substitutions.append(("%models", os.path.join(config.oomplan_source_root, "test", "models")))
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%expect_exit", "/usr/bin/python3 " + os.path.join(config.oomplan_source_root, "utils", "ci", "expect_exit.py")))
