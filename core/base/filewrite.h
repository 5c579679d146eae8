#pragma once

// Writing a file the user named (an export, a report, a CSV) whole or not at all.

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tilescope {

/// Writes `text` to `path` whole or not at all: into a new file beside it, flushed to disk, then
/// renamed over it, so that a failure (a full disk, a killed process) leaves an existing file as it
/// was and no temporary file behind. A symbolic link is written through (the link stays); a device
/// or a pipe (/dev/stdout) is written directly, as there is nothing to keep. Throws InputError
/// naming `path` and `location` (the option or field that named the file) and saying why: no file
/// name, a folder where the file should be, a missing folder, a file where a folder should be, no
/// permission, a full disk, a pipe nobody reads.
void writeFileAtomically(const std::filesystem::path& path, std::string_view text, const std::string& location = {});

/// The first of `inputs` that is the same regular file as `output`: the same device and inode, so
/// also when one names the other through a symbolic or a hard link. None when `output` does not
/// exist yet or is no regular file (a pipe, a device, standard output on a terminal). A command
/// refuses such an output before it writes anything: writing it would destroy what it reads.
std::optional<std::filesystem::path> inputThatIs(const std::filesystem::path& output,
                                                 std::span<const std::filesystem::path> inputs);

} // namespace tilescope
