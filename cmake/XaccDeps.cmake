# Locates the third-party pieces. Each optional dependency switches its component
# off with a message instead of failing the configure step.
find_package(fmt CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
find_package(GTest QUIET)
find_package(TBB CONFIG QUIET)

find_package(Python3 COMPONENTS Interpreter Development.Module REQUIRED)

if(XACC_WITH_TORCH OR XACC_BUILD_PYTHON)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE XACC_TORCH_PREFIX OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE XACC_TORCH_RC ERROR_QUIET)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import pybind11; print(pybind11.get_cmake_dir())"
    OUTPUT_VARIABLE XACC_PYBIND11_DIR OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()

if(XACC_WITH_TORCH)
  if(XACC_TORCH_RC EQUAL 0)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c "import torch; print(torch.version.cuda or '')"
      OUTPUT_VARIABLE XACC_TORCH_CUDA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(XACC_TORCH_RC EQUAL 0 AND XACC_TORCH_CUDA)
    # PyPI's torch for CPython 3.12/3.13 is the CUDA build; its TorchConfig stops the
    # configure without a CUDA toolkit, but xacc uses only the CPU libraries and
    # headers, which every build ships (issue 20).
    get_filename_component(XACC_TORCH_ROOT "${XACC_TORCH_PREFIX}/../.." ABSOLUTE)
    find_library(TORCH_LIBRARY torch PATHS ${XACC_TORCH_ROOT}/lib NO_DEFAULT_PATH)
    find_library(XACC_TORCH_CPU_LIB torch_cpu PATHS ${XACC_TORCH_ROOT}/lib NO_DEFAULT_PATH)
    find_library(XACC_C10_LIB c10 PATHS ${XACC_TORCH_ROOT}/lib NO_DEFAULT_PATH)
    if(TORCH_LIBRARY AND XACC_TORCH_CPU_LIB AND XACC_C10_LIB AND EXISTS ${XACC_TORCH_ROOT}/include/ATen/ATen.h)
      set(Torch_FOUND TRUE)
      # Note [One core build]: the ABI definition goes only to the targets that link
      # torch (through this interface target), never to every object: a global
      # definition changes the command line of the Python-independent core (ir, passes,
      # camel, runtime, ...), so ccache could not serve those objects from build/'s
      # 3.11 tree and each build-py3.X compiled the whole project again (issue 20).
      # The objects that include torch but not Python (the ATen and MLIR backends, the
      # aten executor, the tools: ~20, most of them MLIR's heaviest) are the same for
      # every CUDA torch 2.13.0, whose include trees are identical across cp312/cp313:
      # they reach the headers through <tree>/torch-include, a link to this venv's
      # torch/include, so the command line, relative to the tree as ccache sees it
      # (CCACHE_BASEDIR), names no venv and build-py3.13 is served build-py3.12's
      # objects (ccache still checks every header's contents, so a different torch is
      # a miss, never a wrong object). tests/python/test_version_trees.py checks both.
      set(XACC_TORCH_INCLUDE ${CMAKE_BINARY_DIR}/torch-include)
      file(CREATE_LINK ${XACC_TORCH_ROOT}/include ${XACC_TORCH_INCLUDE} SYMBOLIC)
      set(TORCH_INCLUDE_DIRS ${XACC_TORCH_INCLUDE} ${XACC_TORCH_INCLUDE}/torch/csrc/api/include)
      # The definitions torch's own CMake export gives its consumers (torch_cpu's
      # USE_DISTRIBUTED, USE_RPC, ...: torch/csrc headers test them), as TorchConfig
      # gives them to the 3.11 build; read, not copied, so another torch says its own.
      set(XACC_TORCH_DEFS "")
      set(XACC_CAFFE2_TARGETS ${XACC_TORCH_ROOT}/share/cmake/Caffe2/Caffe2Targets.cmake)
      if(EXISTS ${XACC_CAFFE2_TARGETS})
        file(READ ${XACC_CAFFE2_TARGETS} XACC_CAFFE2_TEXT)
        if(XACC_CAFFE2_TEXT MATCHES "set_target_properties\\(torch_cpu PROPERTIES[^)]*INTERFACE_COMPILE_DEFINITIONS \"([^\"]*)\"")
          set(XACC_TORCH_DEFS "${CMAKE_MATCH_1}")
        endif()
      endif()
      add_library(xacc_torch_cpu INTERFACE IMPORTED)
      set_target_properties(xacc_torch_cpu PROPERTIES
        INTERFACE_LINK_LIBRARIES "${TORCH_LIBRARY};${XACC_TORCH_CPU_LIB};${XACC_C10_LIB}"
        INTERFACE_COMPILE_DEFINITIONS "${XACC_TORCH_DEFS};_GLIBCXX_USE_CXX11_ABI=1")
      set(TORCH_LIBRARIES xacc_torch_cpu)
      message(STATUS "torch ${XACC_TORCH_CUDA} (CUDA build): using its CPU libraries from ${XACC_TORCH_ROOT} (definitions: ${XACC_TORCH_DEFS})")
    endif()
  elseif(XACC_TORCH_RC EQUAL 0)
    list(APPEND CMAKE_PREFIX_PATH ${XACC_TORCH_PREFIX})
    # TorchConfig warns about kineto on CPU builds; harmless.
    find_package(Torch CONFIG QUIET)
  endif()
  if(NOT Torch_FOUND)
    message(WARNING "torch not found: building without the ATen backend and Python module")
    set(XACC_WITH_TORCH OFF)
    set(XACC_BUILD_PYTHON OFF)
  else()
    # torch_python carries the pybind11 type casters for at::Tensor.
    get_filename_component(XACC_TORCH_LIBDIR "${TORCH_LIBRARY}" DIRECTORY)
    find_library(XACC_TORCH_PYTHON_LIB torch_python PATHS ${XACC_TORCH_LIBDIR} NO_DEFAULT_PATH)
  endif()
endif()

if(XACC_BUILD_PYTHON)
  if(XACC_PYBIND11_DIR)
    set(pybind11_DIR ${XACC_PYBIND11_DIR})
  endif()
  find_package(pybind11 CONFIG QUIET)
  if(NOT pybind11_FOUND)
    message(WARNING "pybind11 not found: not building xacc._C")
    set(XACC_BUILD_PYTHON OFF)
  endif()
endif()

if(XACC_WITH_MLIR)
  find_package(MLIR CONFIG QUIET HINTS /usr/lib/llvm-22/lib/cmake/mlir)
  if(NOT MLIR_FOUND)
    message(WARNING "MLIR 22 not found: building without the xpu backend")
    set(XACC_WITH_MLIR OFF)
  endif()
endif()

find_program(XACC_LIT NAMES lit-22 lit)
find_program(XACC_FILECHECK NAMES FileCheck-22 FileCheck
             HINTS /usr/lib/llvm-22/bin)
