#pragma once

// The CUDA toolkit's command-line tools (compute-sanitizer, nvdisasm): where they are, and
// running one to its end with its output in hand. The programs start without the toolkit; what
// needs a tool says so, naming what was searched, when it is missing.

#include <filesystem>
#include <string>
#include <vector>

namespace tilescope {

/// Where a CUDA toolkit usually lives: /usr/local/cuda, /opt/nvidia/cuda, /usr/lib/cuda.
std::vector<std::filesystem::path> standardCudaDirs();

/// The folders a CUDA toolkit may be rooted at, in the order tools are looked for there: the
/// parent of each PATH folder that holds nvcc, $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT, then
/// `cudaDirs`. Candidates only: none need exist.
std::vector<std::filesystem::path>
cudaToolkitRoots(const std::vector<std::filesystem::path>& cudaDirs = standardCudaDirs());

/// A toolkit tool: the file that `envVar` names when set (it must be an executable file, else
/// nothing: `error` says so), else the first executable `name` on PATH, beside nvcc on PATH, in
/// $CUDA_HOME, $CUDA_PATH or $CUDA_ROOT, then in `cudaDirs`, each as ROOT/bin/NAME or
/// ROOT/`subdir`/NAME for each of `subdirs`. An empty path when there is none, and in `error` the
/// places searched ("on PATH, beside nvcc, in $CUDA_HOME/bin or in /usr/local/cuda/bin").
std::filesystem::path findCudaTool(const std::string& name, const char* envVar, std::string* error,
                                   const std::vector<std::filesystem::path>& cudaDirs = standardCudaDirs(),
                                   const std::vector<std::string>& subdirs = {});

struct ProcessOutput {
    bool started = false; ///< false: it could not start (`error` says why)
    int status = -1;      ///< the exit status; 128 + the signal when one ended it; -1 when it overran
    bool timedOut = false;
    std::string out;
    std::string err;
    std::string error;
};

/// Runs argv[0] (a path, or a name looked up on PATH) with the rest as its arguments, no input,
/// and collects its standard output and error. Past `timeoutMs` it is killed (timedOut).
ProcessOutput runTool(const std::vector<std::string>& argv, int timeoutMs = 60000);

} // namespace tilescope
