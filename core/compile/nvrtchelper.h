#pragma once

// NVRTC compiles in helper processes. NVRTC (13.0) runs its C++ front end for one program at a
// time in a process: two threads compiling a source that includes <cuda/std/array> take twice as
// long as one, and a kernel that includes CUB's headers compiles no faster on 16 threads than on
// one. So each compile thread hands its NVRTC compiles to a helper process of its own (the
// worker program in its compile mode, `tilescope-worker --compile`), one at a time, and a helper
// that dies (NVRTC crashed on a config) takes that compile down with it, not the program.
//
// compileKernel() (compile/compiler.h) uses the helpers wherever the worker program is there
// (base/pythonfiles.h: workerProgram()) and TILESCOPE_NVRTC_HELPERS is not "off"; elsewhere, and
// in a helper itself, NVRTC runs in the calling thread. The results are the same either way.

#include "compile/compiler.h"

#include <optional>

namespace tilescope {

/// The result of `request` (CUDA C++ for NVRTC) compiled by this thread's helper, which starts at
/// the thread's first compile; nullopt where no helper can compile it (helpers off, the worker
/// program missing, or a helper that does not start or speaks another NVRTC): the caller then
/// compiles in this process. A helper that dies during a compile gives a transient CompileError
/// saying so; the thread's next compile starts another.
std::optional<CompileResult> compileInNvrtcHelper(const CompileRequest& request);

/// The helper's side: says which NVRTC it has on `out`, then answers every request read from `in`
/// with its result, compiling in this process, until `in` ends. Where `out` is the standard output,
/// what else the process prints goes to its standard error instead. The exit status: 0 at the end
/// of `in`, 4 for a request stream it cannot read.
int serveNvrtcCompiles(int in, int out);

} // namespace tilescope
