// The length overrun.cu's kernel works on, as a header of sizes would give it. The problem file
// cannot see it: its buffer sizes are its own, which is how a buffer ends up declared too small.
#pragma once

#define LENGTH 1048576
