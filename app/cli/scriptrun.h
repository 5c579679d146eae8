#pragma once

// Running a user's Python script with one of Tilescope's stand-in packages first on its path
// (`kt` with kernel_tuner, `triton` with tilescope_triton): finding the package, starting the
// interpreter with the settings in its environment, and opening the workbench afterwards.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace tilescope::cli {

/// This program's path ("" when /proc/self/exe cannot be read).
std::filesystem::path thisProgram();

/// `p` made absolute and normal (as given when that fails).
std::string absolutePath(const std::filesystem::path& p);

/// The default database of a script: its name with .db, in the current folder ("conv.py" -> "conv.db").
std::filesystem::path scriptDatabase(const std::filesystem::path& script);

/// The folder holding the Python package `package` (a folder with __init__.py): $`envVar` when set,
/// else beside this program (python/, as the build leaves it), else share/tilescope/python of the
/// installation, else `sourceFolder` (relative to the source tree this program was built from).
/// Throws InputError when none holds it.
std::filesystem::path findPythonPackage(const std::string& package, const std::string& envVar,
                                        const std::string& sourceFolder);

/// Runs `argv` with `env` added to this process's environment and waits for it; its exit status
/// (128 + signal when a signal ended it). Ctrl-C reaches the child, which decides what it means.
/// Throws InputError naming the --python option, with `hint` after the reason, when it cannot start.
int runChild(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
             const std::string& hint);

/// Replaces this process with the workbench on `db` (`who` says which command opens it). Returns
/// only by throwing InputError when it cannot start.
[[noreturn]] void openWorkbench(const std::string& db, const std::string& who);

} // namespace tilescope::cli
