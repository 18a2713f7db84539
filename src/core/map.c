/* The map primitive. */
#include "internal.h"
