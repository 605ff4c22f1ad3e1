#include <mysofa.h>
