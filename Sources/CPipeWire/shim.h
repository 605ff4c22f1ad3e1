#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
