# lit configuration for xacc's FileCheck tests (.gir IR and pass tests, .cml Camel
# front-end tests, .test for anything else). Run from the repository root:
#
#   lit-22 -sv tests/lit
#
# Paths are computed here, so no lit.site.cfg.py is needed. The tools under test
# come from <repo>/build/bin, or from $XACC_BUILD_DIR/bin when that is set. Tests
# write plain `FileCheck`, `not`, `count` (LLVM 22's tools are put on PATH) and
# `%python` (the Python that has xacc installed, not the one running lit-22);
# `%xacc_bin` is the directory the tools come from.
# Feature `torch` is available when that Python can import torch.
import os
import shutil
import subprocess

import lit.formats

config.name = "xacc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".gir", ".cml", ".test"]
# Inputs/ directories hold files that tests read, not tests.
config.excludes = ["Inputs", "lit.cfg.py"]

config.test_source_root = os.path.dirname(os.path.abspath(__file__))
repo_root = os.path.dirname(os.path.dirname(config.test_source_root))
build_dir = os.path.abspath(os.environ.get("XACC_BUILD_DIR", os.path.join(repo_root, "build")))
config.test_exec_root = os.path.join(build_dir, "lit")


def find_llvm_bin():
    """Directory holding LLVM 22's FileCheck and not (/usr/lib/llvm-22/bin on Debian)."""
    for name in ("FileCheck-22", "FileCheck"):
        path = shutil.which(name)
        if path:
            return os.path.dirname(os.path.realpath(path))
    if os.path.isdir("/usr/lib/llvm-22/bin"):
        return "/usr/lib/llvm-22/bin"
    lit_config.fatal("FileCheck not found: install llvm-22-tools (make install does)")


def find_python():
    """The interpreter with xacc installed. lit-22 itself runs under /usr/bin/python3,
    and pyenv shims do not work in lit's scrubbed environment, so resolve the real
    executable behind `python3` on the caller's PATH (or take $XACC_PYTHON)."""
    explicit = os.environ.get("XACC_PYTHON")
    if explicit:
        return explicit
    for name in ("python3", "python"):
        if shutil.which(name):
            out = subprocess.run([name, "-c", "import sys; print(sys.executable)"],
                                 capture_output=True, text=True)
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip()
    lit_config.fatal("no python3 on PATH")


llvm_bin = find_llvm_bin()
python = find_python()

# Our tools first, then LLVM's test tools (FileCheck, not, count), then the rest.
path = [os.path.join(build_dir, "bin"), llvm_bin, os.environ.get("PATH", "")]
config.environment["PATH"] = os.pathsep.join(path)
# The xacc package under test is this checkout's (its _C links to the build),
# not whatever an editable install elsewhere points to.
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in (repo_root, os.environ.get("PYTHONPATH", "")) if p)
for var in ("HOME", "TMPDIR", "XACC_LOG", "XACC_DUMP", "XACC_CACHE_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# Spell out the versioned FileCheck so a different FileCheck earlier on PATH cannot
# slip in. `not` is left to PATH (and lit's internal shell): a substitution would
# also rewrite the word "not" inside quoted text on RUN lines.
filecheck = os.path.join(llvm_bin, "FileCheck")
if not os.path.exists(filecheck):
    filecheck = shutil.which("FileCheck-22") or filecheck
config.substitutions.append((r"(?<![\w./-])FileCheck(?![\w.-])", filecheck))
config.substitutions.append(("%python", python))
config.substitutions.append(("%xacc_bin", os.path.join(build_dir, "bin")))

if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0:
    config.available_features.add("torch")
