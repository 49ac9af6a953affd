// Symbol visibility for the amn library: everything is hidden by default and
// the public API is marked AMN_API. Usable from C and C++.
#ifndef AMN_EXPORT_H_
#define AMN_EXPORT_H_

#if defined(_WIN32)
#if defined(AMN_BUILDING_LIBRARY)
#define AMN_API __declspec(dllexport)
#else
#define AMN_API __declspec(dllimport)
#endif
#else
#define AMN_API __attribute__((visibility("default")))
#endif

#endif  // AMN_EXPORT_H_
