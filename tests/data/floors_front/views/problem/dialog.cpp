// A view that reaches into a room's internals: refused.
#include "jobs/analyze.h"
#include "model/records.h"
#include "spec/t1common.h"
