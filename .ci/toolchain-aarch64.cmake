# Cross-compiling for aarch64 Linux with Debian's g++-aarch64-linux-gnu and
# the :arm64 -dev packages (`bash .ci/install-deps cross`); tests run under
# qemu-aarch64 (QEMU_CPU picks the default CPU model, e.g. QEMU_CPU=max).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Two roots: the cross toolchain's own (/usr/aarch64-linux-gnu: libc,
# libstdc++) and / for Debian's multiarch :arm64 packages, whose libraries
# and CMake configs live under /usr/lib/aarch64-linux-gnu (find_library and
# find_package search <prefix>/lib/${CMAKE_LIBRARY_ARCHITECTURE} first, so
# FindZLIB, benchmark and the rest find the arm64 files, never the amd64
# ones under /usr/lib/x86_64-linux-gnu).
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
