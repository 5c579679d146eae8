#pragma once
// A ground-floor header that reaches up to the top floor: the floor check must refuse it.
#include "tuner/session.h"
