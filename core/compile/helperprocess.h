#pragma once

// Starting a compile helper process (Triton's Python helpers, compile/triton.h; NVRTC's,
// compile/nvrtchelper.h): its standard input and output one end of a socket pair (a write to a
// helper that died is then an error, not a SIGPIPE), nothing else of this process open in it (a
// helper that outlives a GPU worker must not keep its pipe open), default signal dispositions,
// and a process group of its own (Ctrl-C in a terminal stops the program, which ends its helpers
// by closing their input, rather than killing a compile half-way).

#include <sys/types.h>

#include <string>
#include <vector>

namespace tilescope {

/// Starts `argv` (argv[0] looked up on PATH when it has no '/') with `socket` as its standard input
/// and output and the file `errorFile` (created, or truncated) as its standard error, /dev/null
/// where `errorFile` is empty. Its pid, or -1 with posix_spawn's error number in `error`.
pid_t spawnHelperProcess(const std::vector<std::string>& argv, int socket, const std::string& errorFile, int& error);

} // namespace tilescope
