# Cross-compiling for aarch64 Linux with Debian's g++-aarch64-linux-gnu and
# the :arm64 -dev packages; tests run under qemu-aarch64 (QEMU_CPU picks the
# default CPU model, e.g. QEMU_CPU=max).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
# FindZLIB searches only the find root (/usr/aarch64-linux-gnu); Debian's
# zlib1g-dev:arm64 (pulled in by libzip-dev:arm64) installs under multiarch.
set(ZLIB_LIBRARY /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/libz.so CACHE FILEPATH "arm64 zlib")
