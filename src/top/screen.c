/* placeholder */
#include "live/view.h"
