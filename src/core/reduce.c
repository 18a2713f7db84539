/* The reduce primitive. */
#include "internal.h"
