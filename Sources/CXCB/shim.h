#include <xcb/xcb.h>
#include <xcb/randr.h>

// Swift 6 refuses to take the address of an imported mutable C global (`xcb_randr_id`) in
// strict-concurrency mode; this accessor hands out the extension id xcb_get_extension_data needs.
static inline xcb_extension_t *cxcb_randr_extension(void) { return &xcb_randr_id; }
