/* The scan primitive. */
#include "internal.h"
