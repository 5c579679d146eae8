#pragma once

// Tilescope's own Python files (the Triton compile helper, the kernel_tuner stand-in of
// `tilescope-cli kt`) and the Python that runs them, found the same way by every program: the
// command line, the workbench and the test suites.

#include <filesystem>
#include <string>

namespace tilescope {

/// The file `relative` among Tilescope's Python files: in the folder python/ beside this program
/// (where the build leaves them), in ../share/tilescope/python of an installation, else in the
/// source tree the program was built from (core/compile/python, app/cli/kt). Empty when none has
/// it, with the places looked in written to `searched`.
std::filesystem::path findPythonFile(const std::filesystem::path& relative, std::string* searched = nullptr);

/// Tilescope's worker program (it measures on a GPU, and compiles for the NVRTC helpers):
/// $TILESCOPE_WORKER when set, else tilescope-worker beside this program, which may not exist.
std::filesystem::path workerProgram();

/// The Python that runs Tilescope's helpers: $TILESCOPE_PYTHON when set, else python3 (looked up
/// on PATH when started).
std::string tilescopePython();

} // namespace tilescope
