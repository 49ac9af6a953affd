# `cpack -G DEB` from the build directory: Debian's layout in three packages,
#   libamn<SOVERSION>  the shared library            (component runtime)
#   libamn-dev         headers, CMake package, .pc   (component dev)
#   amn                the CLI, man page, completion (component tools)
#   python3-anamnesis  the Python module            (component python, AMN_BUILD_PYTHON)
# Depends are computed by dpkg-shlibdeps (package dpkg-dev). No -march
# anywhere: one package runs on every CPU of its architecture and picks its
# kernels at run time (.ci/package-check proves it for x86-64 under QEMU,
# .ci/package-check-arm64 for the aarch64 cross build's arm64 set).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME anamnesis)
set(CPACK_PACKAGE_VENDOR "anamnesis")
set(CPACK_PACKAGE_CONTACT "anamnesis maintainers <anamnesis@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
# Each package's Description starts with its own summary line (the first
# line of CPACK_COMPONENT_<C>_DESCRIPTION below): CPackDeb prepends the
# project-wide summary unless it is CPack's default, so it is left at that.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
if(AMN_BUILD_CLI)
  list(APPEND CPACK_COMPONENTS_ALL tools)
endif()
if(AMN_BUILD_PYTHON)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# A cross build packages for its target, not for the machine running cpack
# (CPackDeb asks `dpkg --print-architecture` otherwise): the Debian name of
# the toolchain's multiarch triplet (aarch64-linux-gnu -> arm64). Its
# Depends still come from dpkg-shlibdeps, which skips libraries of another
# ELF machine and reads the :arm64 packages' symbols files in /var/lib/dpkg
# (installed with the -dev:arm64 packages, `.ci/install-deps cross`).
if(CMAKE_CROSSCOMPILING AND NOT CPACK_DEBIAN_PACKAGE_ARCHITECTURE)
  if(NOT CMAKE_LIBRARY_ARCHITECTURE)
    message(FATAL_ERROR "cross build without CMAKE_LIBRARY_ARCHITECTURE (the multiarch "
      "triplet, e.g. aarch64-linux-gnu): set it or CPACK_DEBIAN_PACKAGE_ARCHITECTURE in the "
      "toolchain file")
  endif()
  execute_process(COMMAND dpkg-architecture -t ${CMAKE_LIBRARY_ARCHITECTURE} -q DEB_HOST_ARCH
    OUTPUT_VARIABLE CPACK_DEBIAN_PACKAGE_ARCHITECTURE OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET RESULT_VARIABLE amn_dpkg_arch_result)
  if(NOT amn_dpkg_arch_result EQUAL 0 OR NOT CPACK_DEBIAN_PACKAGE_ARCHITECTURE)
    message(FATAL_ERROR "dpkg-architecture (dpkg-dev) gave no Debian architecture for "
      "${CMAKE_LIBRARY_ARCHITECTURE}: set CPACK_DEBIAN_PACKAGE_ARCHITECTURE")
  endif()
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The CLI's libamn.so.N is found in the build tree; its Depends entry is the
# exact libamn package below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/package)
set(amn_runtime_package libamn${AMN_SOVERSION})
set(amn_exact "(= ${PROJECT_VERSION})")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${amn_runtime_package})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# The shlibs control file ("libamn 0 libamn0 (= version)"), so that
# dpkg-shlibdeps of a program linking libamn finds its package. CPackDeb
# reads only the package-wide variables (no per-component form); only
# libamn0 holds a shared object with a SONAME, so only it gets the file
# (the Python extension, a shared object without one, draws CPack's
# developer warning "missing soname" in python3-anamnesis: harmless).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "dequantize and convert model weights - shared library
libamn reads model weights in safetensors (FP8, GPTQ, AWQ, bitsandbytes,
compressed-tensors, MXFP4), GGUF (every ggml type), .npz and PyTorch files
and dequantizes them to BF16, F16 or F32, or quantizes them. Its kernels are
compiled for every x86-64 and Arm SIMD level and picked at run time, so one
package runs on every CPU of its architecture, bit-identically.
This package holds the shared library.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libamn-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${amn_runtime_package} ${amn_exact}")
set(CPACK_COMPONENT_DEV_DESCRIPTION "dequantize and convert model weights - development files
Headers (the C ABI amn/amn.h and the C++20 API), the CMake package
(find_package(anamnesis), target anamnesis::amn) and pkg-config file
(anamnesis) for libamn.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME amn)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION science)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${amn_runtime_package} ${amn_exact}")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "dequantize and convert model weights - command-line tool
amn inspects model files and dequantizes (remember), quantizes (forget) and
converts them between safetensors and GGUF, choosing the best SIMD kernels
of the CPU it runs on.")

if(AMN_BUILD_PYTHON)
  # The extension is built for one CPython minor version (its file name says
  # cpython-3XY): the package names that range.
  string(REPLACE "." ";" amn_py_parts "${AMN_PYTHON_VERSION}")
  list(GET amn_py_parts 0 amn_py_major)
  list(GET amn_py_parts 1 amn_py_minor)
  math(EXPR amn_py_next "${amn_py_minor} + 1")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-anamnesis)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
    "${amn_runtime_package} ${amn_exact}, python3-numpy, python3 (>= ${AMN_PYTHON_VERSION}), python3 (<< ${amn_py_major}.${amn_py_next})")
  set(CPACK_COMPONENT_PYTHON_DESCRIPTION "dequantize and convert model weights - Python module
The anamnesis module: parse and inspect model files, decode single tensors
into numpy arrays (BF16 as raw uint16, or ml_dtypes.bfloat16 when that is
installed), and remember, forget and convert whole models, through libamn.")
endif()

include(CPack)
