/* Placeholder: being written. */
#include "internal.h"
