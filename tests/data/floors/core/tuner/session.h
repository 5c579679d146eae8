#pragma once
// The top floor, which may include anything below it.
#include "base/upward.h"
