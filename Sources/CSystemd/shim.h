// sd-bus (libsystemd): the D-Bus client SceneSoundDBus wraps. Only its non-variadic calls are
// usable from Swift (append_basic, read_basic, open_container, …). Plus the two Linux calls its
// thread needs that Glibc's Swift module leaves out (they want _GNU_SOURCE).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sys/eventfd.h>
#include <systemd/sd-bus.h>

/// Names the calling thread (at most 15 bytes), for `top -H` and tests.
static inline int scenesound_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

/// A non-blocking, close-on-exec eventfd: the wake descriptor of a connection's thread.
static inline int scenesound_wake_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}
