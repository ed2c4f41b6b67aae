/* PSGFS_ASAN is 1 when this file is compiled with AddressSanitizer, by either compiler: gcc
 * defines __SANITIZE_ADDRESS__, clang answers __has_feature(address_sanitizer) and defines
 * nothing. The tests that split a set between the builds (tests/README.md, "Keeping the suite
 * fast") pick their share with it; testing __SANITIZE_ADDRESS__ alone gave a clang ASan build
 * the plain build's share, so the ASan share of each set ran nowhere. */
#ifndef PSGFS_TESTS_SANITIZER_H
#define PSGFS_TESTS_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define PSGFS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PSGFS_ASAN 1
#endif
#endif
#ifndef PSGFS_ASAN
#define PSGFS_ASAN 0
#endif

#endif
