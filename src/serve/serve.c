/* The HTTP server of live views: see serve.h. */
#include "serve/serve.h"
