// sd-bus (libsystemd): the D-Bus client SceneSoundDBus wraps. Only its non-variadic calls are
// usable from Swift (append_basic, read_basic, open_container, …). Plus the two Linux calls its
// thread needs that Glibc's Swift module leaves out. No _GNU_SOURCE here: a module compiled
// with it declares libc's structs differently from Glibc's module, and Swift refuses the mix.
#include <pthread.h>
#include <sys/eventfd.h>
#include <systemd/sd-bus.h>

// glibc's own prototype, visible to C only with _GNU_SOURCE.
extern int pthread_setname_np(pthread_t thread, const char *name);

/// Names the calling thread (at most 15 bytes), for `top -H` and tests.
static inline int scenesound_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

/// A non-blocking, close-on-exec eventfd: the wake descriptor of a connection's thread.
static inline int scenesound_wake_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}
