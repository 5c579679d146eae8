// Its own folder's header, not core/shapes/: accepted.
#include "shapes/own.h"
