/*
 * Linked into libharness_ffi.so when it is built for Android without the NDK
 * (scripts/lib/ndkless-link.sh). The C parts of the library (SQLite, ring) are then compiled
 * against Debian's glibc headers, and the unwinder is LLVM's libunwind from Rust's musl target:
 * both name a few glibc symbols that Android's C library (bionic) does not export. Each is
 * defined here, hidden, in terms of what bionic does export, so that the library asks the
 * phone only for symbols it has. What the NDK's crtbegin_so.o would give is here too.
 */
#include <stddef.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* bionic's errno is reached through __errno(); glibc's and musl's headers call
 * __errno_location(). */
extern int *__errno(void);
HIDDEN int *__errno_location(void) { return __errno(); }

/* assert(): bionic's __assert2 takes the same four facts in another order. */
extern void __assert2(const char *file, int line, const char *function, const char *expr)
    __attribute__((noreturn));
HIDDEN void __assert_fail(const char *expr, const char *file, unsigned int line, const char *function) {
    __assert2(file, (int)line, function, expr);
}

/* crtbegin_so.o's handle of this library, which thread-local destructors are registered with
 * (__cxa_thread_atexit_impl) and which __cxa_finalize runs them for when it is unloaded. */
HIDDEN void *__dso_handle = &__dso_handle;

/* glibc's <fcntl.h> turns fcntl() into fcntl64() when the file offset is 64 bits (SQLite asks for
 * that); on a 64-bit phone bionic's fcntl() is that call. The third argument is an int or a
 * pointer, passed in the same register either way. */
#include <stdarg.h>
extern int fcntl(int fd, int cmd, ...);
HIDDEN int fcntl64(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl(fd, cmd, arg);
}

/* sysconf()'s names are numbered differently in glibc and bionic: the C parts are compiled with
 * -Dsysconf=pku_glibc_sysconf (scripts/lib/android-core-lib.sh), and the one name they use, the
 * page size, is asked of bionic by its own number. */
extern long sysconf(int name);
extern int *__errno(void);
#define GLIBC_SC_PAGESIZE 30 /* also _SC_PAGE_SIZE */
#define BIONIC_SC_PAGESIZE 0x0027
HIDDEN long pku_glibc_sysconf(int name) {
    if (name == GLIBC_SC_PAGESIZE) return sysconf(BIONIC_SC_PAGESIZE);
    *__errno() = 22; /* EINVAL: a name this shim does not translate */
    return -1;
}
