# Finds libtorch for swerl, in this order (the first that has a TorchConfig.cmake wins):
#   1. the LIBTORCH environment variable (a libtorch root: LIBTORCH/share/cmake/Torch)
#      or the Torch_DIR environment/cache variable (the folder holding TorchConfig.cmake);
#   2. PyTorch's own libtorch: python3 -c "import torch; print(torch.utils.cmake_prefix_path)";
#   3. Debian's libtorch-dev (/usr/lib/<triplet>/cmake/Torch) or any default CMake prefix.
# Sets SWERL_TORCH_SOURCE to a short description of where it came from.

set(_swerl_tried "")

function(_swerl_try_torch_dir dir label)
  if(SWERL_TORCH_FOUND_DIR)
    return()
  endif()
  list(APPEND _swerl_tried "${label}: ${dir}")
  set(_swerl_tried "${_swerl_tried}" PARENT_SCOPE)
  if(EXISTS "${dir}/TorchConfig.cmake")
    set(SWERL_TORCH_FOUND_DIR "${dir}" PARENT_SCOPE)
    set(SWERL_TORCH_SOURCE "${label}" PARENT_SCOPE)
  endif()
endfunction()

if(DEFINED ENV{LIBTORCH} AND NOT "$ENV{LIBTORCH}" STREQUAL "")
  _swerl_try_torch_dir("$ENV{LIBTORCH}/share/cmake/Torch" "LIBTORCH")
endif()
if(DEFINED ENV{Torch_DIR} AND NOT "$ENV{Torch_DIR}" STREQUAL "")
  _swerl_try_torch_dir("$ENV{Torch_DIR}" "Torch_DIR (environment)")
endif()
if(Torch_DIR AND NOT SWERL_TORCH_FOUND_DIR)
  _swerl_try_torch_dir("${Torch_DIR}" "Torch_DIR (CMake variable)")
endif()

if(NOT SWERL_TORCH_FOUND_DIR)
  find_program(SWERL_PYTHON3 NAMES python3 python)
  if(SWERL_PYTHON3)
    execute_process(
      COMMAND "${SWERL_PYTHON3}" -c "import torch; print(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE _swerl_py_prefix
      ERROR_QUIET
      RESULT_VARIABLE _swerl_py_rc
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_swerl_py_rc EQUAL 0 AND _swerl_py_prefix)
      _swerl_try_torch_dir("${_swerl_py_prefix}/Torch" "PyTorch (python3 -c 'import torch')")
    else()
      list(APPEND _swerl_tried "PyTorch: ${SWERL_PYTHON3} has no importable torch")
    endif()
  endif()
endif()

if(NOT SWERL_TORCH_FOUND_DIR)
  if(CMAKE_LIBRARY_ARCHITECTURE)
    _swerl_try_torch_dir("/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/Torch" "Debian libtorch-dev")
  endif()
  _swerl_try_torch_dir("/usr/lib/cmake/Torch" "system libtorch")
  _swerl_try_torch_dir("/usr/local/share/cmake/Torch" "system libtorch")
endif()

if(NOT SWERL_TORCH_FOUND_DIR)
  string(REPLACE ";" "\n    " _swerl_tried_text "${_swerl_tried}")
  message(FATAL_ERROR
    "swerl: libtorch was not found. Tried, in order:\n    ${_swerl_tried_text}\n"
    "Fix one of:\n"
    "  - Debian/Ubuntu: sudo apt-get install libtorch-dev libopenblas0-pthread\n"
    "  - PyTorch installed for python3 (its libtorch is used; CUDA builds need it)\n"
    "  - a libtorch zip from pytorch.org: export LIBTORCH=/path/to/libtorch\n"
    "then run: npm rebuild swerl")
endif()

set(Torch_DIR "${SWERL_TORCH_FOUND_DIR}" CACHE PATH "Folder holding TorchConfig.cmake" FORCE)
find_package(Torch REQUIRED CONFIG)
message(STATUS "swerl: libtorch ${Torch_VERSION} from ${SWERL_TORCH_SOURCE} (${Torch_DIR})")
