"""Builds xacc's C++ core with CMake and installs the Python packages.

The C++ side (libraries, the xacc-opt/camel tools, the `xacc._C` pybind11 module and,
when the MLIR backend is built, `xacc._C_xpu` and `xacc._C_mlir` (Note [Lazy backend
modules])) is one CMake project; `build_ext` hands the whole build to scripts/cmake_build.py, which
configures `build/` once (Ninja, Release, this interpreter) and builds incrementally.
Always install with `pip install --no-build-isolation -e .` (what `make install` does):
the build needs the torch 2.13.0 CPU wheel that is already installed, and an isolated
build environment would fetch another torch.

Note [Wheel layout]: a wheel (`make wheel`: `pip wheel --no-build-isolation` under each
version's interpreter, XACC_BUILD_DIR naming that version's tree) holds the modules in the
xacc package and, as data of the install prefix, the tree's `camel` executable in `bin/`
and its executor plugins in `lib/xacc/executors/`: where the executable looks for plugins
(<its directory>/../lib/xacc/executors, Executor.cpp) and where `python -m camel_lang`
looks for it (<sys.prefix>/bin). An editable install carries neither: `make link-tools`
links the build's tools instead.
"""

import os
import shutil
import sys

from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts"))
import cmake_build  # noqa: E402


class CMakeExtension(Extension):
    """An extension whose sources CMake owns; setuptools only places the result."""

    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        bdir = cmake_build.build()  # incremental: the second extension finds it built
        name = ext.name.rpartition(".")[2]
        built = cmake_build.find_extension(bdir, name)
        if built is None and name in cmake_build.OPTIONAL_EXTENSIONS:
            print(f"note: {ext.name} was not built (no MLIR backend in this configuration)")
            return
        if built is None:
            if cmake_build.extension_expected():
                raise RuntimeError(f"CMake built no {ext.name} module under {bdir}")
            print(f"warning: csrc/python does not exist yet; {ext.name} not built")
            return
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(built, dest)

    def copy_extensions_to_source(self) -> None:
        # Editable install: link the module instead of copying it, so that
        # `cmake --build build` alone keeps `import xacc._C` current.
        cmake_build.link_extension()


class BdistWheel(bdist_wheel):
    """See Note [Wheel layout]."""

    def run(self) -> None:
        bdir = cmake_build.build()  # incremental; build_ext finds it built
        camel = bdir / "bin" / "camel"
        if not camel.is_file():
            raise RuntimeError(f"no camel executable under {bdir / 'bin'}: the wheel would lack it")
        plugins = sorted((bdir / "lib" / "xacc" / "executors").glob("libxacc_exec_*.so"))
        self.distribution.data_files = [("bin", [str(camel)])]
        if plugins:
            self.distribution.data_files.append(("lib/xacc/executors", [str(p) for p in plugins]))
        super().run()


setup(
    ext_modules=[CMakeExtension("xacc._C")]
    + [CMakeExtension("xacc." + name) for name in cmake_build.OPTIONAL_EXTENSIONS],
    cmdclass={"build_ext": CMakeBuild, "bdist_wheel": BdistWheel},
)
