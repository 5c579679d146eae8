#include "base/filewrite.h"

#include "base/error.h"

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace tilescope {

namespace {

namespace fs = std::filesystem;

std::string errorText(int error) {
    return std::generic_category().message(error);
}

// Writes all of `text`; false with errno set when the system refuses (a full disk, a closed pipe).
bool writeAll(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Why `dir` cannot hold a new file ("" when it is a folder). The first part of the path that exists
// tells a missing folder from a file standing where a folder should be.
std::string folderProblem(const fs::path& dir) {
    std::error_code ec;
    const fs::file_status status = fs::status(dir, ec);
    if (fs::is_directory(status))
        return {};
    if (fs::exists(status))
        return dir.string() + " is a file, not a folder";
    for (fs::path up = dir.parent_path(); !up.empty(); up = up.parent_path()) {
        const fs::file_status s = fs::status(up, ec);
        if (fs::exists(s)) {
            if (!fs::is_directory(s))
                return up.string() + " is a file, not a folder";
            break;
        }
        if (up == up.parent_path())
            break;
    }
    return "the folder " + dir.string() + " does not exist";
}

} // namespace

void writeFileAtomically(const fs::path& path, std::string_view text, const std::string& location) {
    const std::string file = path.string();
    auto fail = [&](const std::string& why) { throw InputError(file, location, why); };
    if (path.empty())
        fail("no file name given");

    std::error_code ec;
    fs::path target = path;
    if (fs::is_symlink(path, ec)) {
        // Replace the file the link names, not the link.
        const fs::path resolved = fs::weakly_canonical(path, ec);
        if (!ec)
            target = resolved;
    }
    const fs::file_status status = fs::status(target, ec);
    if (fs::is_directory(status))
        fail("cannot write the file: it is a folder (give a file name)");
    if (fs::exists(status) && !fs::is_regular_file(status)) {
        // A device or a pipe: nothing to keep, and nothing to rename over. Opened without blocking,
        // so that a pipe nobody reads is an error rather than a wait without end.
        const int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            fail(errno == ENXIO ? std::string("cannot write: a pipe that nobody reads")
                                : "cannot write the file: " + errorText(errno));
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        const bool ok = writeAll(fd, text);
        const int error = errno;
        ::close(fd);
        if (!ok)
            fail("writing failed: " + errorText(error));
        return;
    }
    if (!target.has_filename())
        fail("cannot write the file: the path names a folder (give a file name)");
    fs::path dir = target.parent_path();
    if (dir.empty())
        dir = ".";
    if (const std::string why = folderProblem(dir); !why.empty())
        fail("cannot write the file: " + why);

    // A new file beside the target (same file system, so the rename is atomic), hidden, unique to this
    // process and call; an existing file's permissions carry over.
    const bool existed = fs::is_regular_file(status);
    const mode_t mode = existed ? static_cast<mode_t>(status.permissions() & fs::perms::mask) : 0666;
    static std::atomic<unsigned> counter{0};
    const std::string name = target.filename().string().substr(0, 200);
    const fs::path temp =
        dir / ("." + name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1)));
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        fail("cannot write the file in " + dir.string() + ": " + errorText(errno));
    bool ok = writeAll(fd, text) && (!existed || ::fchmod(fd, mode) == 0) && ::fsync(fd) == 0;
    int error = errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        error = errno;
    }
    if (!ok) {
        ::unlink(temp.c_str());
        fail("writing the file failed (" + errorText(error) + ")" +
             (existed ? "; the file is left as it was" : std::string()));
    }
    if (::rename(temp.c_str(), target.c_str()) != 0) {
        error = errno;
        ::unlink(temp.c_str());
        fail("cannot replace the file: " + errorText(error) + (existed ? "; it is left as it was" : std::string()));
    }
}

std::optional<fs::path> inputThatIs(const fs::path& output, std::span<const fs::path> inputs) {
    struct stat out {};
    if (output.empty() || ::stat(output.c_str(), &out) != 0 || !S_ISREG(out.st_mode))
        return std::nullopt;
    for (const fs::path& input : inputs) {
        struct stat in {};
        if (!input.empty() && ::stat(input.c_str(), &in) == 0 && S_ISREG(in.st_mode) && in.st_dev == out.st_dev &&
            in.st_ino == out.st_ino)
            return input;
    }
    return std::nullopt;
}

} // namespace tilescope
