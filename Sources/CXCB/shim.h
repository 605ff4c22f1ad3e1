#include <xcb/xcb.h>
#include <xcb/randr.h>
