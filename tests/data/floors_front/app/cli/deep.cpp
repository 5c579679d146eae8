// A command that assembles the engine from a room no front end may include: refused.
#include "compile/nvrtc.h"
#include "spec/tuningproblem.h"
